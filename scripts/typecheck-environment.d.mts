import type { Plugin } from 'vite';

export declare const definitionLibs: string[];
export declare function declarationsOf(entry: string): { files: Record<string, string>; sources: string[] };
export declare function libFiles(names: readonly string[]): Record<string, string>;
export declare function typecheckEnvironment(): Plugin;
