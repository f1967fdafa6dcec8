// The TypeScript client of contentapi: the types are generated from
// openapi.yaml by openapi-typescript (schema.gen.ts, written by
// `make generate`), the calls are openapi-fetch's, typed by them.
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths, webhooks } from "./schema.gen.js";

export type { components, paths, webhooks } from "./schema.gen.js";

/** A record, as the API answers it. */
export type Image = components["schemas"]["Image"];
export type Document = components["schemas"]["Document"];
export type Voice = components["schemas"]["Voice"];
export type Webhook = components["schemas"]["Webhook"];

/** A webhook's body, by event type, as the document's webhooks declare it. */
export type WebhookEvent<T extends keyof webhooks> = webhooks[T]["post"]["requestBody"]["content"]["application/json"];

/** The client: one typed method per HTTP method, over every path of the API. */
export type ContentAPI = Client<paths>;

/**
 * newClient is a client of the API at baseUrl (the stack's URL, without
 * /api/v1), every request authenticated by apiKey.
 */
export function newClient(baseUrl: string, apiKey: string, options: Pick<ClientOptions, "fetch"> = {}): ContentAPI {
  return createClient<paths>({
    ...options,
    baseUrl,
    headers: { Authorization: `Bearer ${apiKey}`, Accept: "application/json" },
  });
}
