// The subscriptions the live update suites open, and a campaign that may call at any hour.

export const CAMPAIGN_UPDATED = /* GraphQL */ `
  subscription CampaignUpdated($id: UUID!) {
    campaignUpdated(id: $id) {
      id
      status
      pausedReason
      progress {
        total
        pending
        dialing
        done
        reached
        notReached
        doNotCall
        invalid
        cancelled
      }
    }
  }
`;

export const CALL_ATTEMPT_UPDATED = /* GraphQL */ `
  subscription CallAttemptUpdated($campaignId: UUID!) {
    callAttemptUpdated(campaignId: $campaignId) {
      id
      status
      attemptNumber
      toNumber
      campaign {
        id
      }
      contact {
        id
      }
    }
  }
`;

/** v1 campaign fields: every hour of every day, one call per contact, a few at once. */
export const ALWAYS_OPEN = {
  concurrent_calls: 3,
  calling_hours: { start: '00:00', end: '24:00' },
  regional_rules: false,
  active_days: [1, 2, 3, 4, 5, 6, 7],
  schedule_config: { max_attempts: 1 },
};
