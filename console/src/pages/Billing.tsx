import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
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

/** Back from a paid Checkout, the page reads the ledger again this often, this long, to show the credits once Stripe confirms. */
const CONFIRM_REFRESH_MS = 3000;
const CONFIRM_WAIT_MS = 120_000;

export function Billing() {
  const [result, refetch] = useQuery({ query: BillingQuery, requestPolicy: 'cache-and-network' });
  const paid = new URLSearchParams(window.location.search).get('checkout') === 'success';
  useEffect(() => {
    if (!paid) return;
    const started = Date.now();
    const timer = setInterval(() => {
      if (Date.now() - started > CONFIRM_WAIT_MS) clearInterval(timer);
      else refetch({ requestPolicy: 'network-only' });
    }, CONFIRM_REFRESH_MS);
    return () => clearInterval(timer);
  }, [paid, refetch]);
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

      <BuyCredits />

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

const CreateCheckout = graphql(`
  mutation ConsoleCreateCreditCheckout($amountCents: Int!) {
    createCreditCheckout(amountCents: $amountCents) {
      id
      url
    }
  }
`);

/** Opens a Stripe Checkout page for the amount; paid credits land through Stripe's webhook. */
function BuyCredits() {
  const [checkout, create] = useMutation(CreateCheckout);
  const [dollars, setDollars] = useState('50');
  const returned = new URLSearchParams(window.location.search).get('checkout');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await create({ amountCents: Math.round(Number(dollars) * 100) });
    const url = result.data?.createCreditCheckout.url;
    if (url) window.location.assign(url);
  };
  return (
    <section aria-labelledby="buy-title" className="card">
      <h2 id="buy-title">Buy credits</h2>
      {returned === 'success' ? <p role="status">Payment received: the credits appear here as soon as Stripe confirms it.</p> : null}
      {returned === 'cancelled' ? <p role="status">The payment was cancelled; nothing was charged.</p> : null}
      <form className="form" onSubmit={submit}>
        <label htmlFor="buy-amount">Amount in US dollars (5 to 10,000)</label>
        <input
          id="buy-amount"
          name="amount"
          type="number"
          inputMode="decimal"
          min={5}
          max={10000}
          step={0.01}
          required
          value={dollars}
          onChange={(event) => setDollars(event.target.value)}
        />
        <button type="submit" disabled={checkout.fetching}>
          Pay with Stripe
        </button>
      </form>
      <ErrorNote error={checkout.error} />
    </section>
  );
}
