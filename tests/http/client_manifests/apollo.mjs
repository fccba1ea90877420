// The site's page query through Apollo Client, as the site's build would send it: the link
// sends only the id its persisted-query manifest holds (@apollo/persisted-query-lists).
//   node apollo.mjs API_URL MANIFEST DOCUMENT SLUG
// Prints {"data": ..., "cache": ...}: the answer and Apollo's normalized cache.
import { readFileSync } from "node:fs";
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { createPersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { generatePersistedQueryIdsFromManifest } from "@apollo/persisted-query-lists";

const [url, manifestPath, documentPath, slug] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const persisted = createPersistedQueryLink(
  generatePersistedQueryIdsFromManifest({ loadManifest: () => manifest }),
);
const client = new ApolloClient({
  link: persisted.concat(new HttpLink({ uri: url })),
  cache: new InMemoryCache(),
});
const query = gql(readFileSync(documentPath, "utf8"));
const result = await client.query({ query, variables: { slug } });
console.log(JSON.stringify({ data: result.data, cache: client.cache.extract() }));
