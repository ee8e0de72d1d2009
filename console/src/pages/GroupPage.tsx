import { useQuery } from 'urql';
import { graphql } from '../gql';
import { words } from '../format';
import { ErrorNote } from '../parts/ErrorNote';

const Group = graphql(`
  query ConsoleContactGroup($id: UUID!) {
    contactGroup(id: $id) {
      id
      name
      total
      contacts(first: 200) {
        edges {
          node {
            id
            name
            phoneNumber
            status
          }
        }
      }
    }
  }
`);

export function GroupPage({ id }: { id: string }) {
  const [result] = useQuery({ query: Group, variables: { id } });
  const group = result.data?.contactGroup;
  if (result.error) return <ErrorNote error={result.error} />;
  if (!group) return result.fetching ? <p>Loading…</p> : <h1>Group not found</h1>;
  return (
    <>
      <p className="crumbs">
        <a href="#/contacts">Contact groups</a>
      </p>
      <h1>{group.name}</h1>
      <p>
        {group.total} contacts{group.total > 200 ? ' (the first 200 below)' : ''}.
      </p>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Phone</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {group.contacts.edges.map(({ node: c }) => (
              <tr key={c.id}>
                <th scope="row">
                  <a href={`#/contacts/${c.id}`}>{c.name || '(no name)'}</a>
                </th>
                <td>{c.phoneNumber}</td>
                <td>{words(c.status)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
