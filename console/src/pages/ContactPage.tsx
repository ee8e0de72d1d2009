import { useQuery } from 'urql';
import { graphql } from '../gql';
import { cents, when, words } from '../format';
import { ErrorNote } from '../parts/ErrorNote';

const ContactQuery = graphql(`
  query ConsoleContact($id: UUID!) {
    contact(id: $id) {
      id
      name
      phoneNumber
      email
      status
      group {
        id
        name
      }
    }
    callAttempts(contactId: $id, first: 50) {
      edges {
        node {
          id
          attemptNumber
          status
          outcome
          startedAt
          durationSeconds
          costCents
          summary
          transcript
          recordingUrl
          campaign {
            id
            name
          }
          appointments {
            id
            status
            scheduledAt
            timezone
          }
        }
      }
    }
  }
`);

/** A contact and each call made to it: outcome, summary, transcript, recording and the appointment booked. */
export function ContactPage({ id }: { id: string }) {
  const [result] = useQuery({ query: ContactQuery, variables: { id } });
  const contact = result.data?.contact;
  if (result.error) return <ErrorNote error={result.error} />;
  if (!contact) return result.fetching ? <p>Loading…</p> : <h1>Contact not found</h1>;
  const attempts = result.data?.callAttempts.edges.map((e) => e.node) ?? [];
  return (
    <>
      <p className="crumbs">
        <a href={`#/groups/${contact.group.id}`}>{contact.group.name}</a>
      </p>
      <h1>{contact.name || contact.phoneNumber}</h1>
      <p>
        {contact.phoneNumber} {contact.email ? `· ${contact.email}` : null} · {words(contact.status)}
      </p>
      <h2>Calls</h2>
      {attempts.length ? null : <p>No call to this contact yet.</p>}
      <ol className="attempts">
        {attempts.map((a) => (
          <li key={a.id} className="card">
            <h3>
              Attempt {a.attemptNumber}, <a href={`#/campaigns/${a.campaign.id}`}>{a.campaign.name}</a>
            </h3>
            <p>
              {when(a.startedAt)} · {words(a.outcome ?? a.status)} · {a.durationSeconds ?? 0} s · {cents(a.costCents)}
            </p>
            {a.summary ? <p>{a.summary}</p> : null}
            {a.recordingUrl ? (
              <p>
                <a href={a.recordingUrl} rel="noreferrer" target="_blank">
                  Recording
                </a>
              </p>
            ) : null}
            {a.appointments.map((ap) => (
              <p key={ap.id}>
                Appointment {words(ap.status)}: {when(ap.scheduledAt)} {ap.timezone ?? ''}
              </p>
            ))}
            {a.transcript ? (
              <details>
                <summary>Transcript</summary>
                <pre className="transcript">{a.transcript}</pre>
              </details>
            ) : null}
          </li>
        ))}
      </ol>
    </>
  );
}
