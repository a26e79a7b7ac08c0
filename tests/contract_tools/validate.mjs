// Validates the generated contract documents with real validators and prints one JSON
// object on stdout (tests/protocol/test_contract_docs.py reads it):
//
//   node validate.mjs asyncapi ../../docs/asyncapi.json
//     @asyncapi/parser (the official parser: the AsyncAPI 3.0 JSON Schema, its Spectral
//     rulesets and the payload schemas), then what the parsed document holds: operations
//     with their action, channel, messages and reply messages, the channel's bindings.
//   node validate.mjs openapi ../../docs/openapi.json
//     @readme/openapi-parser (the OpenAPI 3.1 schema plus its own checks), then the
//     dereferenced document's operations.
//
// Exit code 0 when the validator ran (whatever it found: the test judges), 2 on bad usage.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const [kind, file] = process.argv.slice(2);
if (!kind || !file) {
  console.error('usage: node validate.mjs asyncapi|openapi FILE');
  process.exit(2);
}
const text = readFileSync(file, 'utf8');

async function asyncapi() {
  const { Parser } = await import('@asyncapi/parser');
  const parser = new Parser();
  const { document, diagnostics } = await parser.parse(text);
  const out = {
    validator: '@asyncapi/parser',
    version: require('@asyncapi/parser/package.json').version,
    diagnostics: diagnostics.map((d) => ({
      code: d.code, severity: d.severity, message: d.message, path: d.path,
    })),
    parsed: document !== undefined,
  };
  if (document) {
    out.asyncapi = document.version();
    out.operations = document.operations().all().map((op) => ({
      id: op.id(),
      action: op.action(),
      channels: op.channels().all().map((c) => c.address()),
      messages: op.messages().all().map((m) => m.name()),
      reply: op.reply() ? op.reply().messages().all().map((m) => m.name()) : null,
    }));
    out.channels = document.channels().all().map((c) => ({
      address: c.address(),
      bindings: c.bindings().all().map((b) => b.protocol()),
      messages: c.messages().all().map((m) => m.name()),
    }));
    out.payloadsWithSchema = document.messages().all()
      .filter((m) => m.hasPayload() && m.payload().properties() !== undefined)
      .map((m) => m.name());
  }
  return out;
}

async function openapi() {
  const { validate, dereference } = await import('@readme/openapi-parser');
  const result = await validate(JSON.parse(text));
  const out = {
    validator: '@readme/openapi-parser',
    version: require('@readme/openapi-parser/package.json').version,
    valid: result.valid,
    errors: (result.errors || []).map((e) => e.message),
    warnings: (result.warnings || []).map((w) => w.message),
  };
  if (result.valid) {
    const api = await dereference(JSON.parse(text));
    out.openapi = api.openapi;
    out.operations = [];
    for (const [path, item] of Object.entries(api.paths)) {
      for (const [method, op] of Object.entries(item)) {
        out.operations.push({
          path, method, operationId: op.operationId, responses: Object.keys(op.responses || {}),
        });
      }
    }
  }
  return out;
}

const run = { asyncapi, openapi }[kind];
if (!run) {
  console.error(`unknown document kind ${kind}`);
  process.exit(2);
}
console.log(JSON.stringify(await run()));
