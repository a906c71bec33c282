import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import prettier from 'prettier';

export const CLIENT_SCHEMA_FILE = new URL('../packages/client/src/schema.d.ts', import.meta.url);

/**
 * The client's types for an OpenAPI document, formatted as the repository formats code, so the
 * generated file passes `prettier --check` and compares byte for byte in the staleness test.
 */
export async function renderClientSchema(document: object): Promise<string> {
  const nodes = await openapiTS(JSON.stringify(document), { silent: true });
  const source = `${COMMENT_HEADER}// Regenerate with \`npm run client:generate\`; a test fails when it is stale.\n\n${astToString(nodes)}`;
  const options = await prettier.resolveConfig(CLIENT_SCHEMA_FILE);
  return prettier.format(source, { ...options, parser: 'typescript' });
}
