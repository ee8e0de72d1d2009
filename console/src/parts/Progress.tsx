export interface ProgressCounts {
  total: number;
  done: number;
  pending: number;
  dialing: number;
  consentMissing: number;
  doNotCall: number;
  invalid: number;
}

/** Contacts done, waiting (to be called or in a call) and blocked (no consent, do-not-call, invalid). */
export function Progress({ progress }: { progress: ProgressCounts }) {
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
