// SVG files imported from TypeScript are their source text (the builder's asset/source rule).
declare module '*.svg' {
  const source: string;
  export default source;
}
