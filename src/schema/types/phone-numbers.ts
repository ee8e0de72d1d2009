import { builder } from '../builder.js';

export const PhoneNumber = builder.prismaObject('PhoneNumber', {
  description: 'An outbound number (E.164) owned by the user, usually attached to an agent.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    number: t.exposeString('number'),
    label: t.exposeString('label'),
    isPrimary: t.exposeBoolean('isPrimary'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
