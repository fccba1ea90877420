// Runs graphql-http's audit of a GraphQL-over-HTTP server and prints one JSON line per check.
import { auditServer } from 'graphql-http';

const results = await auditServer({ url: process.argv[2] });
for (const { id, name, status, reason } of results) {
  console.log(JSON.stringify({ id, name, status, reason: reason ?? null }));
}
