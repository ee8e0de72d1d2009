import { useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import { cents, percent, when, words } from '../format';
import { CampaignActions } from '../parts/CampaignActions';
import { Chart } from '../parts/Chart';
import { ErrorNote } from '../parts/ErrorNote';
import { LiveCalls } from '../parts/LiveCalls';
import { Progress } from '../parts/Progress';
import { useCampaignChanges, useLiveCampaign } from '../parts/live';

const CampaignQuery = graphql(`
  query ConsoleCampaign($id: UUID!) {
    campaign(id: $id) {
      id
      name
      status
      pausedReason
      timezone
      concurrentCalls
      regionalRules
      callingHours {
        start
        end
      }
      startedAt
      completedAt
      callingBeginsAt
      spentCents
      agent {
        id
        name
      }
      contactGroup {
        id
        name
      }
      redialOf {
        id
        name
      }
      redialOutcomes
      progress {
        ...ProgressCounts
      }
      variants {
        id
        name
        weight
        agent {
          name
        }
      }
      report(limit: 1) {
        metrics {
          successRate
          totalCostCents
          totalDurationSeconds
          averageDurationSeconds
          appointmentsBooked
          contacts {
            total
            attempted
            reached
          }
          calls {
            total
            completed
            noAnswer
            busy
            voicemail
            failed
          }
          outcomes {
            human
            voicemail
            noAnswer
            busy
            failed
            ivr
            callScreening
            invalidNumber
          }
          variants {
            variantId
            name
            contacts
            attempted
            reached
            reachRate
            calls
            appointments
          }
          variantComparison {
            significant
            pValue
            statement
          }
        }
      }
      dialBlocks(first: 50) {
        edges {
          node {
            id
            reason
            detail
            until
            contact {
              id
              name
              phoneNumber
            }
          }
        }
      }
      history(first: 50) {
        edges {
          node {
            id
            action
            at
            actor {
              kind
            }
            changes {
              field
              from
              to
            }
          }
        }
      }
    }
  }
`);

const PreviewQuery = graphql(`
  query ConsoleDispatchPreview($id: UUID!) {
    previewDispatch(campaignId: $id) {
      contactCount
      callableNow
      toCall
      firstCallAt
      creditsNeededCents
      creditsAvailableCents
      byRule {
        rule
        contacts
      }
    }
  }
`);

/** The campaign and its report are read again this long after the last live change, not on every call. */
const REPORT_SETTLE_MS = 1500;

export function CampaignPage({ id }: { id: string }) {
  const [result, refetch] = useQuery({ query: CampaignQuery, variables: { id } });
  const [preview, refetchPreview] = useQuery({ query: PreviewQuery, variables: { id } });
  const live = useLiveCampaign(id);
  // A call, or an entry of the history (an edit made anywhere, a pause), read again with the report.
  const [changed, setChanged] = useState(0);
  const [reportAsked, setReportAsked] = useState(0);
  useCampaignChanges(id, () => setChanged((n) => n + 1));

  useEffect(() => {
    if (!live && !changed) return;
    const timer = setTimeout(() => setReportAsked((n) => n + 1), REPORT_SETTLE_MS);
    return () => clearTimeout(timer);
  }, [live, changed]);
  useEffect(() => {
    if (reportAsked) refetch({ requestPolicy: 'network-only' });
  }, [reportAsked, refetch]);

  const campaign = result.data?.campaign;
  if (result.error) return <ErrorNote error={result.error} />;
  if (!campaign) return result.fetching ? <p>Loading…</p> : <h1>Campaign not found</h1>;
  const status = live?.status ?? campaign.status;
  const pausedReason = live ? live.pausedReason : campaign.pausedReason;
  const progress = live?.progress ?? campaign.progress;
  const { metrics } = campaign.report;
  const totalWeight = campaign.variants.reduce((sum, v) => sum + v.weight, 0);

  const outcomeRows = [
    { stage: 'Contacts', contacts: metrics.contacts.total },
    { stage: 'Attempted', contacts: metrics.contacts.attempted },
    { stage: 'Reached', contacts: metrics.contacts.reached },
    { stage: 'Appointments', contacts: metrics.appointmentsBooked },
  ];
  const outcomes = Object.entries(metrics.outcomes)
    .filter(([key]) => key !== '__typename')
    .map(([outcome, calls]) => ({ outcome: words(outcome.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)), calls: calls as number }));

  return (
    <>
      <p className="crumbs">
        <a href="#/campaigns">Campaigns</a>
      </p>
      <div className="title">
        <h1>{campaign.name}</h1>
        <span className={`status status-${status}`} data-testid="campaign-status">
          {words(status)}
          {pausedReason ? ` (${words(pausedReason)})` : null}
        </span>
      </div>
      <p>
        Agent <strong>{campaign.agent.name}</strong> calls group{' '}
        <a href={`#/groups/${campaign.contactGroup.id}`}>{campaign.contactGroup.name}</a>, {campaign.callingHours.start}–
        {campaign.callingHours.end} {campaign.timezone}, {campaign.concurrentCalls} at once
        {campaign.regionalRules ? ', regional rules on' : ', regional rules off'}.
        {campaign.callingBeginsAt ? ` Calling begins ${when(campaign.callingBeginsAt)}.` : null}
      </p>
      {campaign.redialOf ? (
        <p>
          Redials <a href={`#/campaigns/${campaign.redialOf.id}`}>{campaign.redialOf.name}</a>: the contacts it called and{' '}
          {campaign.redialOutcomes.length ? `whose last call met ${campaign.redialOutcomes.map(words).join(', ')}` : 'did not reach'}.
        </p>
      ) : null}
      <Progress progress={progress} />
      <CampaignActions
        campaign={{ id, name: campaign.name, status }}
        onDone={() => {
          refetch({ requestPolicy: 'network-only' });
          refetchPreview({ requestPolicy: 'network-only' });
        }}
      />

      <section aria-labelledby="live-title">
        <h2 id="live-title">Live calls</h2>
        <LiveCalls campaignId={id} onCall={() => setChanged((n) => n + 1)} />
      </section>

      <section aria-labelledby="report-title">
        <h2 id="report-title">Report</h2>
        <dl className="metrics">
          <div>
            <dt>Reach rate</dt>
            <dd>{percent(metrics.successRate)}</dd>
          </div>
          <div>
            <dt>Calls</dt>
            <dd data-metric="calls">{metrics.calls.total}</dd>
          </div>
          <div>
            <dt>Appointments</dt>
            <dd>{metrics.appointmentsBooked}</dd>
          </div>
          <div>
            <dt>Average call</dt>
            <dd>{Math.round(metrics.averageDurationSeconds)} s</dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd>{cents(metrics.totalCostCents)}</dd>
          </div>
        </dl>
        <div className="charts">
          <Chart
            id="funnel"
            title="Outcome funnel"
            rows={outcomeRows}
            categoryKey="stage"
            series={[{ key: 'contacts', label: 'Contacts' }]}
          />
          <Chart id="outcomes" title="Calls by outcome" rows={outcomes} categoryKey="outcome" series={[{ key: 'calls', label: 'Calls' }]} />
        </div>
      </section>

      <section aria-labelledby="ab-title">
        <h2 id="ab-title">A/B variants</h2>
        {campaign.variants.length ? (
          <>
            <div className="table-scroll">
              <table aria-label="A/B variants">
                <thead>
                  <tr>
                    <th scope="col">Variant</th>
                    <th scope="col">Agent</th>
                    <th scope="col">Weight</th>
                    <th scope="col">Contacts</th>
                    <th scope="col">Called</th>
                    <th scope="col">Reached</th>
                    <th scope="col">Reach rate</th>
                    <th scope="col">Appointments</th>
                  </tr>
                </thead>
                <tbody>
                  {campaign.variants.map((v) => {
                    const m = metrics.variants.find((x) => x.variantId === v.id);
                    return (
                      <tr key={v.id}>
                        <th scope="row">{v.name}</th>
                        <td>{v.agent.name}</td>
                        <td>
                          {v.weight} ({percent(v.weight / totalWeight)})
                        </td>
                        <td>{m?.contacts ?? 0}</td>
                        <td>{m?.attempted ?? 0}</td>
                        <td>{m?.reached ?? 0}</td>
                        <td>{m ? percent(m.reachRate) : '—'}</td>
                        <td>{m?.appointments ?? 0}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            <p data-testid="ab-significance">
              {metrics.variantComparison ? (
                <>
                  {/* The statement gives both reach rates, the 95% level and p. */}
                  <strong>{metrics.variantComparison.significant ? 'Significant' : 'Not significant'}</strong>:{' '}
                  {metrics.variantComparison.statement}
                </>
              ) : (
                'Not enough calls yet to compare the variants.'
              )}
            </p>
            <Chart
              id="variants"
              title="Contacts reached by variant"
              rows={metrics.variants.map((m) => ({ variant: m.name, reached: m.reached, notReached: m.attempted - m.reached }))}
              categoryKey="variant"
              series={[
                { key: 'reached', label: 'Reached' },
                { key: 'notReached', label: 'Called, not reached' },
              ]}
            />
          </>
        ) : (
          <p>This campaign has one agent, no A/B split.</p>
        )}
      </section>

      <section aria-labelledby="preview-title">
        <h2 id="preview-title">Dispatch preview</h2>
        <ErrorNote error={preview.error} />
        {preview.data ? (
          <>
            <dl className="metrics">
              <div>
                <dt>Contacts</dt>
                <dd data-preview="contacts">{preview.data.previewDispatch.contactCount}</dd>
              </div>
              <div>
                <dt>To call</dt>
                <dd data-preview="to-call">{preview.data.previewDispatch.toCall}</dd>
              </div>
              <div>
                <dt>Callable now</dt>
                <dd data-preview="callable-now">{preview.data.previewDispatch.callableNow}</dd>
              </div>
              <div>
                <dt>First call</dt>
                <dd>{when(preview.data.previewDispatch.firstCallAt)}</dd>
              </div>
              <div>
                <dt>Credits needed / available</dt>
                <dd>
                  {cents(preview.data.previewDispatch.creditsNeededCents)} / {cents(preview.data.previewDispatch.creditsAvailableCents)}
                </dd>
              </div>
            </dl>
            <Chart
              id="blocked-by-rule"
              title="Contacts blocked, by rule"
              rows={preview.data.previewDispatch.byRule
                .filter((r) => r.contacts > 0)
                .map((r) => ({ rule: words(r.rule), contacts: r.contacts }))}
              categoryKey="rule"
              series={[{ key: 'contacts', label: 'Contacts' }]}
              empty="No rule holds a contact back."
            />
          </>
        ) : null}
      </section>

      <section aria-labelledby="blocks-title">
        <h2 id="blocks-title">Blocked contacts</h2>
        {campaign.dialBlocks.edges.length ? (
          <div className="table-scroll">
            <table aria-label="Blocked contacts">
              <thead>
                <tr>
                  <th scope="col">Contact</th>
                  <th scope="col">Rule</th>
                  <th scope="col">Detail</th>
                  <th scope="col">Until</th>
                </tr>
              </thead>
              <tbody>
                {campaign.dialBlocks.edges.map(({ node: b }) => (
                  <tr key={b.id}>
                    <th scope="row">
                      <a href={`#/contacts/${b.contact.id}`}>{b.contact.name || b.contact.phoneNumber}</a>
                    </th>
                    <td>{words(b.reason)}</td>
                    <td>{b.detail}</td>
                    <td>{when(b.until)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p>No contact of this campaign was blocked.</p>
        )}
      </section>

      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <ol className="history">
          {campaign.history.edges.map(({ node: h }) => (
            <li key={h.id}>
              <strong>{words(h.action)}</strong> by {words(h.actor.kind)}, {when(h.at)}
              {h.changes.length ? (
                <ul>
                  {h.changes.map((c) => (
                    <li key={c.field}>
                      <code>{c.field}</code>: {JSON.stringify(c.from)} → {JSON.stringify(c.to)}
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}
