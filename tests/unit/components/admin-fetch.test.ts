import { afterEach, describe, expect, it, vi } from "vitest";
import { adminCall } from "@/components/admin/admin-fetch";

afterEach(() => {
  vi.unstubAllGlobals();
});

function answering(response: Response) {
  vi.stubGlobal(
    "fetch",
    vi.fn(async () => response),
  );
}

describe("an admin API call", () => {
  it("answers the JSON a successful call returns", async () => {
    answering(Response.json({ access: { mode: "all" } }));
    expect(await adminCall("/api/admin/models/access")).toEqual({
      ok: true,
      value: { access: { mode: "all" } },
    });
  });

  it("fails with a sentence, rather than throwing, when a 200 is not JSON (a proxy's page)", async () => {
    answering(new Response("<html>Sign in to the Wi-Fi</html>", { status: 200 }));
    const result = await adminCall("/api/admin/models/access");
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.message).toMatch(/could not be read/);
  });

  it("sends the browser to sign in, back to this page, once the account was disabled", async () => {
    const assign = vi.fn();
    vi.stubGlobal("window", { location: { pathname: "/admin/users", search: "?q=ada", assign } });
    answering(
      Response.json(
        { error: { code: "forbidden:account_disabled", message: "This account is disabled." } },
        { status: 403 },
      ),
    );
    expect(await adminCall("/api/admin/users")).toEqual({
      ok: false,
      message: "This account is disabled.",
      status: 403,
    });
    expect(assign).toHaveBeenCalledExactlyOnceWith(
      "/login?next=%2Fadmin%2Fusers%3Fq%3Dada&reason=disabled",
    );
  });

  it("sends the browser to sign in, back to this page, once its session ended elsewhere", async () => {
    const assign = vi.fn();
    vi.stubGlobal("window", { location: { pathname: "/admin/users", search: "", assign } });
    answering(
      Response.json(
        { error: { code: "unauthorized:auth", message: "You need to sign in first." } },
        { status: 401 },
      ),
    );
    expect(await adminCall("/api/admin/users")).toEqual({
      ok: false,
      message: "You need to sign in first.",
      status: 401,
    });
    expect(assign).toHaveBeenCalledExactlyOnceWith("/login?next=%2Fadmin%2Fusers");
  });

  it("answers the server's own message when it refuses", async () => {
    answering(Response.json({ error: { message: "Admins only." } }, { status: 403 }));
    expect(await adminCall("/api/admin/models/access")).toEqual({
      ok: false,
      message: "Admins only.",
      status: 403,
    });
  });
});
