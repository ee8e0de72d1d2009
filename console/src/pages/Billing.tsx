import { useQuery } from 'urql';
import { graphql } from '../gql';
import { cents, when, words } from '../format';
import { ErrorNote } from '../parts/ErrorNote';

const BillingQuery = graphql(`
  query ConsoleBilling {
    creditBalance {
      balanceCents
      effectiveBalanceCents
      heldCents
      includedRemainingCents
      lowBalanceThresholdCents
    }
    creditTransactions(first: 100) {
      edges {
        node {
          id
          kind
          amountCents
          balanceAfterCents
          description
          createdAt
          campaign {
            id
            name
          }
          receipt {
            url
          }
        }
      }
    }
  }
`);

export function Billing() {
  const [result] = useQuery({ query: BillingQuery, requestPolicy: 'cache-and-network' });
  const balance = result.data?.creditBalance;
  const transactions = result.data?.creditTransactions.edges.map((e) => e.node) ?? [];
  return (
    <>
      <h1>Billing</h1>
      <ErrorNote error={result.error} />
      {balance ? (
        <dl className="metrics">
          <div>
            <dt>Balance</dt>
            <dd data-testid="balance">{cents(balance.balanceCents)}</dd>
          </div>
          <div>
            <dt>Held for calls in progress</dt>
            <dd>{cents(balance.heldCents)}</dd>
          </div>
          <div>
            <dt>Available</dt>
            <dd>{cents(balance.effectiveBalanceCents)}</dd>
          </div>
          <div>
            <dt>Included credits left</dt>
            <dd>{cents(balance.includedRemainingCents)}</dd>
          </div>
        </dl>
      ) : null}

      <section aria-labelledby="buy-title" className="card" data-slot="buy-credits">
        <h2 id="buy-title">Buy credits</h2>
        <p>Buying credits by card from the console is not available yet. Credits bought elsewhere appear here at once.</p>
      </section>

      <h2>Transactions</h2>
      <div className="table-scroll">
        <table aria-label="Transactions">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Amount</th>
              <th scope="col">Balance after</th>
              <th scope="col">Description</th>
              <th scope="col">Receipt</th>
            </tr>
          </thead>
          <tbody>
            {transactions.map((t) => (
              <tr key={t.id}>
                <th scope="row">{when(t.createdAt)}</th>
                <td>{words(t.kind)}</td>
                <td>{cents(t.amountCents)}</td>
                <td>{cents(t.balanceAfterCents)}</td>
                <td>
                  {t.description}
                  {t.campaign ? (
                    <>
                      {' '}
                      (<a href={`#/campaigns/${t.campaign.id}`}>{t.campaign.name}</a>)
                    </>
                  ) : null}
                </td>
                <td>
                  {t.receipt ? (
                    <a href={t.receipt.url} target="_blank" rel="noreferrer">
                      Receipt
                    </a>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
