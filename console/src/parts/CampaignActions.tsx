import { useState } from 'react';
import { useMutation } from 'urql';
import type { CombinedError } from '@urql/core';
import { graphql } from '../gql';
import { go } from '../router';
import { ErrorNote } from './ErrorNote';

const Dispatch = graphql(`
  mutation ConsoleDispatchCampaign($id: UUID!) {
    dispatchCampaign(id: $id, triggeredBy: "console") {
      detail
      campaign {
        id
        status
      }
    }
  }
`);
const Pause = graphql(`
  mutation ConsolePauseCampaign($id: UUID!) {
    pauseCampaign(id: $id) {
      id
      status
    }
  }
`);
const Resume = graphql(`
  mutation ConsoleResumeCampaign($id: UUID!) {
    resumeCampaign(id: $id) {
      id
      status
    }
  }
`);
const Cancel = graphql(`
  mutation ConsoleCancelCampaign($id: UUID!) {
    cancelCampaign(id: $id) {
      id
      status
    }
  }
`);
const Clone = graphql(`
  mutation ConsoleCloneCampaign($id: UUID!) {
    cloneCampaign(id: $id) {
      id
    }
  }
`);
const Redial = graphql(`
  mutation ConsoleRedialCampaign($id: UUID!) {
    redialCampaign(id: $id) {
      id
    }
  }
`);

/** What can be done to a campaign in its state; a clone or a redial opens the new draft. */
export function CampaignActions({ campaign, onDone }: { campaign: { id: string; name: string; status: string }; onDone?: () => void }) {
  const [, dispatch] = useMutation(Dispatch);
  const [, pause] = useMutation(Pause);
  const [, resume] = useMutation(Resume);
  const [, cancel] = useMutation(Cancel);
  const [, clone] = useMutation(Clone);
  const [, redial] = useMutation(Redial);
  const [error, setError] = useState<CombinedError>();
  const [detail, setDetail] = useState<string>();
  const [busy, setBusy] = useState(false);
  const { id, status } = campaign;

  async function run(action: () => Promise<{ error?: CombinedError; data?: unknown }>, after?: (data: any) => void) {
    setBusy(true);
    setError(undefined);
    // What a dispatch said no longer holds once anything else is done.
    setDetail(undefined);
    const result = await action();
    setBusy(false);
    setError(result.error);
    if (!result.error) {
      after?.(result.data);
      onDone?.();
    }
  }

  const live = status === 'running' || status === 'scheduled';
  // A redial calls the contacts its source called and did not reach: one that has called nobody has none.
  const redialable = status !== 'draft' && status !== 'scheduled';
  return (
    <div className="actions" role="group" aria-label={`Actions for ${campaign.name}`}>
      {status === 'draft' || status === 'scheduled' ? (
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            run(
              () => dispatch({ id }),
              (d) => setDetail(d.dispatchCampaign.detail),
            )
          }
        >
          Dispatch
        </button>
      ) : null}
      {status === 'running' ? (
        <button type="button" disabled={busy} onClick={() => run(() => pause({ id }))}>
          Pause
        </button>
      ) : null}
      {status === 'paused' ? (
        <button type="button" disabled={busy} onClick={() => run(() => resume({ id }))}>
          Resume
        </button>
      ) : null}
      {live || status === 'paused' || status === 'draft' ? (
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={() => window.confirm(`Cancel "${campaign.name}"? Contacts still waiting are not called.`) && run(() => cancel({ id }))}
        >
          Cancel
        </button>
      ) : null}
      <button
        type="button"
        className="secondary"
        disabled={busy}
        onClick={() =>
          run(
            () => clone({ id }),
            (d) => go(`/campaigns/${d.cloneCampaign.id}`),
          )
        }
      >
        Clone
      </button>
      {redialable ? (
        <button
          type="button"
          className="secondary"
          disabled={busy}
          onClick={() =>
            run(
              () => redial({ id }),
              (d) => go(`/campaigns/${d.redialCampaign.id}`),
            )
          }
        >
          Redial
        </button>
      ) : null}
      {detail ? (
        <p role="status" className="detail">
          {detail}
        </p>
      ) : null}
      <ErrorNote error={error} />
    </div>
  );
}
