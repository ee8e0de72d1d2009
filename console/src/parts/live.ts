import { useSubscription } from 'urql';
import { graphql } from '../gql';

const CampaignLive = graphql(`
  subscription ConsoleCampaignLive($id: UUID!) {
    campaignUpdated(id: $id) {
      id
      status
      pausedReason
      progress {
        ...ProgressCounts
      }
    }
  }
`);

/** The campaign's status and progress as the server streams them (null until the first event). */
export function useLiveCampaign(id: string) {
  const [result] = useSubscription({ query: CampaignLive, variables: { id } });
  return result.data?.campaignUpdated ?? null;
}

const CampaignChanged = graphql(`
  subscription ConsoleCampaignChanged($id: UUID!) {
    campaignChanged(id: $id) {
      id
    }
  }
`);

/** Calls `onChange` for each new entry of the campaign's history (an edit, a dispatch, a pause, ...) as it is written. */
export function useCampaignChanges(id: string, onChange: () => void) {
  useSubscription({ query: CampaignChanged, variables: { id } }, (_previous: unknown, event) => {
    onChange();
    return event;
  });
}
