// The token or API key the console calls the API with: in sessionStorage only, so that it is gone when
// the tab closes and no other tab or later visit reads it.

const KEY = 'callflow.token';

export const session = {
  token: (): string | null => sessionStorage.getItem(KEY),
  logIn: (token: string) => sessionStorage.setItem(KEY, token),
  logOut: () => sessionStorage.removeItem(KEY),
};
