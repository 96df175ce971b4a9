/**
 * The modules scripts/typecheck-environment.mjs (a Vite plugin) makes for the editor's type checker: the
 * declarations of one of our entry points (`src/public/workflow.ts?declarations`) and the standard libs.
 */
declare module '*?declarations' {
  /** The entry's declaration file and every declaration file it reaches, by path under src. */
  const declarations: { entry: string; files: Record<string, string> };
  export default declarations;
}

declare module 'virtual:typescript-libs' {
  /** The `lib` names the checker uses and the `lib.*.d.ts` files they need, by file name. */
  const libs: { lib: string[]; files: Record<string, string> };
  export default libs;
}
