import { afterEach, describe, expect, it, vi } from "vitest";
import { checkStateChange } from "@/lib/http/origin";

const APP = "http://fold.local:3000";

function request(method: string, headers: Record<string, string>, url = `${APP}/api/chats`) {
  return new Request(url, { method, headers });
}

function refusal(fn: () => void): { code: string; status: number } | null {
  try {
    fn();
    return null;
  } catch (error) {
    return error as { code: string; status: number };
  }
}

const JSON_TYPE = { "content-type": "application/json" };

describe("checkStateChange", () => {
  it("lets reads through whatever their origin", () => {
    expect(
      refusal(() => checkStateChange(request("GET", { origin: "http://evil.example" }))),
    ).toBeNull();
  });

  it("lets a JSON request from the app's own origin through", () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(
        refusal(() => checkStateChange(request(method, { origin: APP, ...JSON_TYPE }))),
      ).toBeNull();
    }
    expect(
      refusal(() =>
        checkStateChange(
          request("POST", { origin: APP, "content-type": "Application/JSON; charset=utf-8" }),
        ),
      ),
    ).toBeNull();
  });

  it("takes the origin of Referer when a browser sends no Origin", () => {
    expect(
      refusal(() => checkStateChange(request("POST", { referer: `${APP}/chat/1`, ...JSON_TYPE }))),
    ).toBeNull();
    expect(
      refusal(() =>
        checkStateChange(request("POST", { referer: "http://evil.example/x", ...JSON_TYPE })),
      ),
    ).toMatchObject({ code: "forbidden:origin", status: 403 });
  });

  it.each([
    ["a foreign origin", { origin: "http://evil.example" }],
    ["a look-alike", { origin: `${APP}.evil.example` }],
    ["another port", { origin: "http://fold.local:3001" }],
    ["another scheme", { origin: "https://fold.local:3000" }],
    ["a null origin", { origin: "null" }],
    ["no origin at all", {}],
    ["an unparseable referer", { referer: "::::" }],
  ])("refuses %s with 403 forbidden:origin", (_, headers) => {
    expect(
      refusal(() => checkStateChange(request("POST", { ...headers, ...JSON_TYPE }))),
    ).toMatchObject({
      code: "forbidden:origin",
      status: 403,
    });
  });

  it("trusts the host the browser addressed behind a proxy (X-Forwarded-Host)", () => {
    const proxied = request(
      "POST",
      {
        origin: "https://chat.example.org",
        "x-forwarded-host": "chat.example.org",
        "x-forwarded-proto": "https",
        ...JSON_TYPE,
      },
      "http://10.0.0.5:3000/api/chats",
    );
    expect(refusal(() => checkStateChange(proxied))).toBeNull();
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""])(
    "refuses a body sent as %j with 415",
    (type) => {
      const headers: Record<string, string> = { origin: APP };
      if (type) headers["content-type"] = type;
      expect(refusal(() => checkStateChange(request("POST", headers)))).toMatchObject({
        code: "unsupported_media_type:body",
        status: 415,
      });
    },
  );
});

describe("checkStateChange with BETTER_AUTH_URL set", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it("trusts that URL's origin only, not whatever host the request names", async () => {
    vi.resetModules();
    vi.stubEnv("BETTER_AUTH_URL", "https://fold.example.com");
    const { checkStateChange: check } = await import("@/lib/http/origin");
    const configured = request("POST", { origin: "https://fold.example.com", ...JSON_TYPE });
    expect(refusal(() => check(configured))).toBeNull();
    const spoofedHost = request(
      "POST",
      { origin: "http://evil.example", "x-forwarded-host": "evil.example", ...JSON_TYPE },
      "http://evil.example/api/chats",
    );
    expect(refusal(() => check(spoofedHost))).toMatchObject({ code: "forbidden:origin" });
  });
});
