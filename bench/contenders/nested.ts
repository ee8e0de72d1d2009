// The nested read every contender answers: a page of the customer's campaigns, newest first, each with its
// agent's name and the first contacts of its group (erased ones left out, oldest first). Our schema's
// query, and PostGraphile's equivalent with aliases so that both answers are the same bytes.

export const OURS = /* GraphQL */ `
  query Nested($first: Int!, $contacts: Int!) {
    campaigns(first: $first) {
      edges {
        node {
          id
          name
          agent {
            name
          }
          contactGroup {
            name
            contacts(first: $contacts) {
              edges {
                node {
                  id
                  firstName
                  lastName
                  phoneNumber
                }
              }
            }
          }
        }
      }
    }
  }
`;

// PostGraphile has no notion of the caller, so the customer is a condition. `liveContacts`,
// `firstName` and `lastName` are the computed columns bench/contenders/postgraphile.ts creates: a plain
// `condition` cannot leave erased contacts out (`erasedAt: null` means "no condition"), and the names live
// in the jsonb `data`.
export const POSTGRAPHILE = /* GraphQL */ `
  query Nested($first: Int!, $contacts: Int!, $userId: UUID!) {
    campaigns: allCampaigns(first: $first, orderBy: [CREATED_AT_DESC, ID_DESC], condition: { userId: $userId }) {
      edges {
        node {
          id
          name
          agent: agentByAgentId {
            name
          }
          contactGroup: contactGroupByContactGroupId {
            name
            contacts: liveContacts(first: $contacts) {
              edges {
                node {
                  id
                  firstName
                  lastName
                  phoneNumber
                }
              }
            }
          }
        }
      }
    }
  }
`;

// PostGraphile v5's amber preset names a table's `id` column `rowId` (its `id` is the global node id);
// otherwise v4's query.
export const POSTGRAPHILE_V5 = /* GraphQL */ `
  query Nested($first: Int!, $contacts: Int!, $userId: UUID!) {
    campaigns: allCampaigns(first: $first, orderBy: [CREATED_AT_DESC, ROW_ID_DESC], condition: { userId: $userId }) {
      edges {
        node {
          id: rowId
          name
          agent: agentByAgentId {
            name
          }
          contactGroup: contactGroupByContactGroupId {
            name
            contacts: liveContacts(first: $contacts) {
              edges {
                node {
                  id: rowId
                  firstName
                  lastName
                  phoneNumber
                }
              }
            }
          }
        }
      }
    }
  }
`;

export const oursBody = (first: number, contacts: number) =>
  JSON.stringify({ query: OURS, variables: { first, contacts }, operationName: 'Nested' });

export const postgraphileBody = (first: number, contacts: number, userId: string) =>
  JSON.stringify({ query: POSTGRAPHILE, variables: { first, contacts, userId }, operationName: 'Nested' });

export const postgraphileV5Body = (first: number, contacts: number, userId: string) =>
  JSON.stringify({ query: POSTGRAPHILE_V5, variables: { first, contacts, userId }, operationName: 'Nested' });
