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
