// The TypeScript client against a running stack (TestTypeScriptClient in
// shared/app/integration starts one and runs these with node --test):
// CONTENTAPI_URL is its URL, CONTENTAPI_KEY an API key of an account with
// nothing in it, and the stack lets webhook endpoints use 127.0.0.1.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Webhook as Verifier } from "standardwebhooks";
import { newClient, type components, type WebhookEvent } from "../src/index.js";

const baseUrl = required("CONTENTAPI_URL");
const apiKey = required("CONTENTAPI_KEY");
const api = newClient(baseUrl, apiKey);

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: the tests run against a stack (go test ./shared/app/integration -run TestTypeScriptClient)`);
  }
  return value;
}

// stringHeaders are a request's headers as standardwebhooks reads them.
function stringHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v === "string") out[k] = v;
  }
  return out;
}

async function until(what: string, ok: () => boolean, seconds = 60): Promise<void> {
  const end = Date.now() + seconds * 1000;
  while (!ok()) {
    if (Date.now() > end) {
      throw new Error(`gave up waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("create, read with If-None-Match, update with If-Match, delete", async () => {
  // A document with only its required fields: the defaulted ones are optional.
  const created = await api.POST("/api/v1/documents", { body: { name: "Launch", prompt: "Our new espresso machine" } });
  assert.equal(created.response.status, 201);
  const doc = created.data?.data;
  assert.ok(doc);
  assert.equal(doc.name, "Launch");
  assert.equal(doc.template_id, 1);

  const read = await api.GET("/api/v1/documents/{id}", { params: { path: { id: doc.id } } });
  assert.equal(read.response.status, 200);
  const etag = read.response.headers.get("ETag");
  assert.ok(etag);
  const again = await api.GET("/api/v1/documents/{id}", { params: { path: { id: doc.id }, header: { "If-None-Match": etag } } });
  assert.equal(again.response.status, 304);

  const updated = await api.PATCH("/api/v1/documents/{id}", {
    params: { path: { id: doc.id }, header: { "If-Match": etag } },
    body: { favorite: true },
  });
  assert.equal(updated.response.status, 200);
  assert.equal(updated.data?.data.favorite, true);
  const stale = await api.PATCH("/api/v1/documents/{id}", {
    params: { path: { id: doc.id }, header: { "If-Match": etag } },
    body: { name: "Too late" },
  });
  assert.equal(stale.response.status, 412);
  assert.equal(stale.error?.status, 412);

  const deleted = await api.DELETE("/api/v1/documents/{id}", { params: { path: { id: doc.id } } });
  assert.equal(deleted.response.status, 200);
  assert.deepEqual(deleted.data, { id: doc.id, object: "document", deleted: true, status: 200 });
  const gone = await api.GET("/api/v1/documents/{id}", { params: { path: { id: doc.id } } });
  assert.equal(gone.response.status, 404);
});

test("list and follow links.next", async () => {
  for (let i = 1; i <= 12; i++) {
    const r = await api.POST("/api/v1/voices", { body: { name: `Voice ${i}`, guide: "Short sentences.", language: "pt-BR" } });
    assert.equal(r.response.status, 201);
  }
  const first = await api.GET("/api/v1/voices", { params: { query: { per_page: 10, sort: "asc" } } });
  assert.equal(first.response.status, 200);
  const page1 = first.data;
  assert.ok(page1);
  assert.equal(page1.data.length, 10);
  assert.equal(page1.meta.total, 12);
  assert.ok(page1.links.next);
  // links.next is the whole URL of the next page, as the service gave it.
  const next = await fetch(page1.links.next, { headers: { Authorization: `Bearer ${apiKey}`, Accept: "application/json" } });
  assert.equal(next.status, 200);
  const page2 = (await next.json()) as components["schemas"]["VoiceList"];
  assert.deepEqual(page2.data.map((v) => v.name), ["Voice 11", "Voice 12"]);
  assert.equal(page2.links.next, null);
});

test("every template's documents in one list: template_id all", async () => {
  const ids: number[] = [];
  for (const template_id of [9, 4]) {
    const r = await api.POST("/api/v1/documents", { body: { name: `Template ${template_id}`, prompt: "p", template_id } });
    assert.equal(r.response.status, 201);
    ids.push(r.data?.data.id ?? 0);
  }
  const all = await api.GET("/api/v1/documents", { params: { query: { template_id: "all" } } });
  assert.equal(all.response.status, 200);
  assert.deepEqual(all.data?.data.slice(0, 2).map((d) => d.id), [ids[1], ids[0]]);
  const nine = await api.GET("/api/v1/documents", { params: { query: { template_id: 9 } } });
  assert.deepEqual(nine.data?.data.map((d) => d.id), [ids[0]]);
});

// monthsFrom is the month n months after period (YYYY-MM), written alike.
function monthsFrom(period: string, n: number): string {
  const [year, month] = period.split("-").map(Number);
  return new Date(Date.UTC(year ?? 0, (month ?? 1) - 1 + n, 1)).toISOString().slice(0, 7);
}

test("usage of this month, of an earlier one by its period, and a month to come refused", async () => {
  const now = await api.GET("/api/v1/usage");
  assert.equal(now.response.status, 200);
  const period = now.data?.data.period ?? "";
  assert.match(period, /^\d{4}-\d{2}$/);
  const same = await api.GET("/api/v1/usage", { params: { query: { period } } });
  assert.equal(same.data?.data.period, period);
  assert.equal(same.data?.data.documents.used, now.data?.data.documents.used);
  // A year ago, before this account existed: zeros.
  const earlier = monthsFrom(period, -12);
  const before = await api.GET("/api/v1/usage", { params: { query: { period: earlier } } });
  assert.equal(before.response.status, 200);
  assert.equal(before.data?.data.period, earlier);
  assert.equal(before.data?.data.documents.used, 0);
  assert.equal(before.data?.data.spend.used_usd, 0);
  const next = await api.GET("/api/v1/usage", { params: { query: { period: monthsFrom(period, 1) } } });
  assert.equal(next.response.status, 422);
  const refused = next.error;
  assert.ok(refused && "errors" in refused, "a 422 with messages per field");
  assert.equal(refused.errors["period"]?.length, 1);
});

test("regenerate with Prefer: respond-async", async () => {
  const created = await api.POST("/api/v1/images", {
    body: { name: "Cliff", description: "A lighthouse", resolution: "256x256", style: "digital_art" },
  });
  assert.equal(created.response.status, 201);
  const image = created.data?.data;
  assert.ok(image);
  assert.equal(image.style, "digital_art");
  const regenerated = await api.POST("/api/v1/images/{id}/regenerate", {
    params: { path: { id: image.id }, header: { Prefer: "respond-async" } },
    body: { medium: "watercolor" },
  });
  assert.equal(regenerated.response.status, 202);
  assert.equal(regenerated.response.headers.get("Preference-Applied"), "respond-async");
  assert.equal(regenerated.data?.data.generation?.status, "pending");
  assert.equal(regenerated.data?.data.medium, "watercolor");
});

test("register a webhook and verify its deliveries with standardwebhooks", async () => {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(204).end();
    });
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  try {
    const port = (receiver.address() as AddressInfo).port;
    const registered = await api.POST("/api/v1/webhooks", {
      body: { url: `http://127.0.0.1:${port}/hook`, events: "image.generated", description: "TypeScript test" },
    });
    assert.equal(registered.response.status, 201);
    const hook = registered.data?.data;
    assert.ok(hook);
    assert.deepEqual(hook.events, ["image.generated"]);
    const verifier = new Verifier(hook.secret);

    const tested = await api.POST("/api/v1/webhooks/{id}/test", { params: { path: { id: hook.id } } });
    assert.equal(tested.response.status, 202);
    const image = await api.POST("/api/v1/images", { body: { name: "Sunset", description: "A red sky", resolution: "512x512" } });
    assert.equal(image.response.status, 201);
    const id = image.data?.data.id;
    assert.ok(id);

    // Every delivery verifies; the image's generated event and the test
    // event are among them (an earlier test's regenerate may end meanwhile
    // and be delivered too).
    const verified = (): { type: string }[] =>
      received.map((d) => verifier.verify(d.body, stringHeaders(d.headers)) as { type: string });
    const ours = (): WebhookEvent<"image.generated"> | undefined =>
      verified()
        .filter((e): e is WebhookEvent<"image.generated"> => e.type === "image.generated")
        .find((e) => e.data.id === id);
    const testEvent = (): WebhookEvent<"webhook.test"> | undefined =>
      verified().find((e): e is WebhookEvent<"webhook.test"> => e.type === "webhook.test");
    await until("the image's event and the test event", () => ours() !== undefined && testEvent() !== undefined);
    assert.equal(ours()?.data.generation?.status, "done");
    assert.equal(testEvent()?.data.webhook_id, hook.id);
    assert.deepEqual(new Set(verified().map((e) => e.type)), new Set(["image.generated", "webhook.test"]));
    // A body changed in transit does not verify.
    const first = received[0];
    assert.ok(first);
    assert.throws(() => verifier.verify(first.body.replace("}", ', "x": 1}'), stringHeaders(first.headers)));

    const deliveries = await api.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: hook.id } } });
    assert.equal(deliveries.response.status, 200);
    assert.ok((deliveries.data?.data.length ?? 0) >= 2);
    const removed = await api.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: hook.id } } });
    assert.equal(removed.response.status, 200);
  } finally {
    receiver.close();
  }
});

// What the types refuse: each line below would compile were a value typed
// as any string or number, and @ts-expect-error then fails tsc.
export function refusedByTheTypes(): void {
  // @ts-expect-error: "oil" is no style
  void api.POST("/api/v1/images", { body: { name: "N", description: "D", resolution: "256x256", style: "oil" } });
  // @ts-expect-error: 7 is no page size
  void api.GET("/api/v1/images", { params: { query: { per_page: 7 } } });
  // @ts-expect-error: an id is a number
  void api.GET("/api/v1/images/{id}", { params: { path: { id: "7" } } });
  // @ts-expect-error: a document needs its prompt
  void api.POST("/api/v1/documents", { body: { name: "N" } });
  // @ts-expect-error: favorite is a boolean
  void api.PATCH("/api/v1/images/{id}", { params: { path: { id: 7 } }, body: { favorite: "1" } });
  // @ts-expect-error: a list's template is a number or "all"
  void api.GET("/api/v1/documents", { params: { query: { template_id: "every" } } });
}
