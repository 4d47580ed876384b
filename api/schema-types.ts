/**
 * `true` when A and B are the same type (each assignable to the other), `never` otherwise: a route
 * schema checks at compile time that it describes exactly what its service returns.
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
