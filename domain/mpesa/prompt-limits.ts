/**
 * How many M-Pesa prompts anyone may cause. The hosted checkout is public, so these bound what a
 * looping client can do: to one link's workflow history (each prompt adds tens of events), and
 * to a customer's phone (each prompt rings it).
 */
export const maxPromptsPerLink = 10;
/** Prompts to one phone, across every link, within `phonePromptWindowMinutes`. */
export const maxPromptsPerPhone = 5;
export const phonePromptWindowMinutes = 15;
