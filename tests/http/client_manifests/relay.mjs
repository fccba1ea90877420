// The site's page query through Relay, as a Relay app sends a persisted query: the compiler's
// artifact holds only the query's id (persistConfig), which the network layer sends as
// `documentId`.
//   node relay.mjs API_URL ARTIFACT SLUG
// Prints {"data": ...}.
import { pathToFileURL } from "node:url";
import relay from "relay-runtime";

const { Environment, Network, RecordSource, Store, fetchQuery } = relay;
const [url, artifactPath, slug] = process.argv.slice(2);
const { default: request } = await import(pathToFileURL(artifactPath).href);
const network = Network.create(async (params, variables) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ documentId: params.id, variables }),
  });
  return response.json();
});
const environment = new Environment({ network, store: new Store(new RecordSource()) });
const data = await fetchQuery(environment, request, { slug }).toPromise();
console.log(JSON.stringify({ data }));
