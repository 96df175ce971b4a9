/**
 * How a method of the wire contract is declared, once: `method<Params, Result>({ field: rule, … })` gives the
 * rule of each param (checked at run time by `parseRequest`) and carries the param and result types, from
 * which the host's handlers (src/host/handlers) and the client's typed facade (`ShuttleClient.api`) are
 * derived. A new method is one declaration in its domain's file and one handler.
 */
import type { FieldRule } from './fields';

/** A rule for every param of `P`, optional ones included (their rule ends in `?`). */
export type FieldRules<P> = { readonly [K in keyof P & string]-?: FieldRule };

/** One method: its param rules, and (types only) its params and result. */
export type MethodDeclaration<P, R> = {
  readonly params: FieldRules<P>;
  /** Types only: never present at run time. */
  readonly types?: { params: P; result: R };
};

/** Declares a method taking `P` and answering `R`. */
export function method<P extends object, R>(params: FieldRules<P>): MethodDeclaration<P, R> {
  return { params };
}

/** A method without params. */
export type Empty = Record<string, never>;

/** The params and result types of a declaration. */
export type ParamsOf<D> = D extends MethodDeclaration<infer P, unknown> ? P : never;
export type ResultOf<D> = D extends MethodDeclaration<object, infer R> ? R : never;
