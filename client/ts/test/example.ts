// The TypeScript blocks of README.md and docs/*.md: each is the body of a
// function here, which tsc --strict compiles with the tests
// (TestTypeScriptClient), so a page's code type-checks against the
// generated types (client's TestDocsShowTheTypeScriptExamples holds the
// pages to these bodies).
import { newClient } from "../src/index.js";

export async function exampleCreateAndList(): Promise<void> {
  const api = newClient("http://127.0.0.1:3000", process.env["KEY"] ?? "");
  const created = await api.POST("/api/v1/images", {
    body: { name: "Sunset", description: "A red sky over the sea", resolution: "1024x1024", style: "digital_art" },
  });
  if (created.data) {
    console.log("created image", created.data.data.id, created.response.headers.get("Location"));
  } else {
    console.log("status", created.response.status, created.error); // 422: errors per field
  }
  const page = await api.GET("/api/v1/images", { params: { query: { search: "sunset", per_page: 25 } } });
  if (page.data) {
    console.log(page.data.meta.total, "images match");
  }
}
