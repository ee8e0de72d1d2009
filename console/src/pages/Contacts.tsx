import { useQuery } from 'urql';
import { graphql } from '../gql';
import { when } from '../format';
import { ErrorNote } from '../parts/ErrorNote';

const Groups = graphql(`
  query ConsoleContactGroups {
    contactGroups(first: 100) {
      edges {
        node {
          id
          name
          total
          createdAt
        }
      }
    }
  }
`);

export function Contacts() {
  const [result] = useQuery({ query: Groups, requestPolicy: 'cache-and-network' });
  const groups = result.data?.contactGroups.edges.map((e) => e.node) ?? [];
  return (
    <>
      <div className="title">
        <h1>Contact groups</h1>
        <a className="button" href="#/contacts/import">
          Import a CSV
        </a>
      </div>
      <ErrorNote error={result.error} />
      {result.data && !groups.length ? <p>No group yet: import a CSV file of contacts.</p> : null}
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">Contacts</th>
              <th scope="col">Imported</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.id}>
                <th scope="row">
                  <a href={`#/groups/${g.id}`}>{g.name}</a>
                </th>
                <td>{g.total}</td>
                <td>{when(g.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
