/**
 * The correlation id: one id that follows a payment across the API log, the worker log, its trace
 * and the Temporal UI (docs/tracing.md). A link or invoice takes the id of the request that created
 * it and keeps it with its row; its workflow carries it in its memo, hands it to each activity in
 * a header, and the activities log it and tag their spans with it.
 */
export const correlationMemoKey = 'correlationId';
/** The header of an activity task (or a workflow start) that carries it. */
export const correlationHeader = 'malipo-correlation-id';
/** The span attribute that carries it. */
export const correlationAttribute = 'malipo.correlation_id';
