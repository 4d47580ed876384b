/** Task queues by workload, so a slow upstream on one cannot starve the others. */
export const taskQueues = {
  payments: 'payments',
  chains: 'chains',
  webhooks: 'webhooks',
} as const;
