import { graphql } from '../gql';
import type { ProgressCountsFragment } from '../gql/graphql';

// The counts every view of a campaign shows, selected once: the list, the campaign's page and its live updates.
export const ProgressCounts = graphql(`
  fragment ProgressCounts on CampaignProgress {
    total
    done
    pending
    dialing
    consentMissing
    doNotCall
    invalid
  }
`);

/** Contacts done, waiting (to be called or in a call) and blocked (no consent, do-not-call, invalid). */
export function Progress({ progress }: { progress: ProgressCountsFragment }) {
  const waiting = progress.pending + progress.dialing;
  const blocked = progress.consentMissing + progress.doNotCall + progress.invalid;
  return (
    <div className="progress">
      <progress max={Math.max(progress.total, 1)} value={progress.done} aria-label="Contacts done" />
      <dl className="counts">
        <div>
          <dt>Done</dt>
          <dd data-count="done">
            {progress.done} / {progress.total}
          </dd>
        </div>
        <div>
          <dt>Waiting</dt>
          <dd data-count="waiting">{waiting}</dd>
        </div>
        <div>
          <dt>Blocked</dt>
          <dd data-count="blocked">{blocked}</dd>
        </div>
      </dl>
    </div>
  );
}
