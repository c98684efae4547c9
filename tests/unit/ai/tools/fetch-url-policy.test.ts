import { describe, expect, it } from "vitest";
import { fetchUrl } from "@/lib/ai/tools/fetch-url";
import { expectFailure, fakeLookup, recordingFetch } from "./fetch-doubles";

describe("fetch_url address policy", () => {
  it.each([
    ["http://127.0.0.1/", /127\.0\.0\.1 is a loopback address/],
    ["http://10.1.2.3:8080/admin", /10\.1\.2\.3 is a private address/],
    ["http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a link-local address/],
    ["http://[::1]:3000/", /::1 is a loopback address/],
    ["http://[::ffff:127.0.0.1]/", /loopback/],
    ["http://2130706433/", /127\.0\.0\.1 is a loopback address/],
    ["http://0.0.0.0:5432/", /unspecified/],
  ])("refuses %s before sending anything", async (url, message) => {
    const fetch = recordingFetch();
    await expectFailure(fetchUrl(url, { fetch }), "refused", message);
    expect(fetch.calls).toEqual([]);
  });

  it("refuses localhost after resolving it with the system resolver", async () => {
    const fetch = recordingFetch();
    const error = await expectFailure(
      fetchUrl("http://localhost:3000/", { fetch }),
      "refused",
      /localhost resolves to an address outside the public internet/,
    );
    // What a name resolves to is the server's network: neither the address nor its kind is told.
    expect(error.message).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(fetch.calls).toEqual([]);
  });

  it("refuses a hostname when any of its addresses is private", async () => {
    const lookup = fakeLookup({ "intranet.test": ["93.184.215.14", "10.0.0.7"] });
    const fetch = recordingFetch();
    const error = await expectFailure(
      fetchUrl("https://intranet.test/wiki", { lookup, fetch }),
      "refused",
      /intranet\.test resolves to an address outside the public internet/,
    );
    expect(error.message).not.toMatch(/10\.0\.0\.7|private/);
    expect(lookup.calls).toEqual(["intranet.test"]);
    expect(fetch.calls).toEqual([]);
  });

  it("vets every redirect hop and refuses one that lands on a private address", async () => {
    const lookup = fakeLookup({ "public.test": ["93.184.215.14"] });
    const fetch = recordingFetch(
      () => new Response(null, { status: 302, headers: { location: "http://10.0.0.1/" } }),
    );
    await expectFailure(
      fetchUrl("http://public.test/start", { lookup, fetch }),
      "refused",
      /Refused to fetch http:\/\/10\.0\.0\.1\/: 10\.0\.0\.1 is a private address/,
    );
    expect(fetch.calls).toEqual(["http://public.test/start"]);
  });

  it("refuses a redirect to a hostname that resolves to a private address", async () => {
    const lookup = fakeLookup({ "public.test": ["93.184.215.14"], "sneaky.test": ["192.168.0.5"] });
    const fetch = recordingFetch(
      () => new Response(null, { status: 307, headers: { location: "//sneaky.test/x" } }),
    );
    await expectFailure(
      fetchUrl("http://public.test/", { lookup, fetch }),
      "refused",
      /sneaky\.test/,
    );
    expect(lookup.calls).toEqual(["public.test", "sneaky.test"]);
    expect(fetch.calls).toEqual(["http://public.test/"]);
  });

  it("follows redirects between public hosts through an injected fetch", async () => {
    const lookup = fakeLookup({ "a.test": ["93.184.215.14"], "b.test": ["2606:4700::6810:84e5"] });
    const fetch = recordingFetch((url) =>
      url.startsWith("http://a.test")
        ? new Response(null, { status: 301, headers: { location: "https://b.test/final" } })
        : new Response("arrived", { headers: { "content-type": "text/plain" } }),
    );
    const result = await fetchUrl("http://a.test/", { lookup, fetch });
    expect(result).toMatchObject({
      url: "http://a.test/",
      finalUrl: "https://b.test/final",
      status: 200,
      text: "arrived",
    });
  });

  it.each([
    "file:///etc/passwd",
    "ftp://example.com/file",
    "javascript:alert(1)",
    "data:text/plain,hello",
  ])("refuses the non-http URL %s", async (url) => {
    await expectFailure(fetchUrl(url), "invalid_url", /Only http and https/);
  });

  it("rejects text that is not a URL", async () => {
    await expectFailure(fetchUrl("example.com/page"), "invalid_url", /not an absolute URL/);
  });

  it("rejects a redirect to a location that is not a URL", async () => {
    const lookup = fakeLookup({ "public.test": ["93.184.215.14"] });
    const fetch = recordingFetch(
      () => new Response(null, { status: 302, headers: { location: "http://[nope/" } }),
    );
    await expectFailure(
      fetchUrl("http://public.test/", { lookup, fetch }),
      "invalid_url",
      /redirected to an invalid URL "http:\/\/\[nope\/"/,
    );
  });

  it("reports an unresolvable host as a network error", async () => {
    await expectFailure(
      fetchUrl("http://nowhere.test/", { lookup: fakeLookup({}) }),
      "network",
      /Could not resolve nowhere\.test \(ENOTFOUND\)/,
    );
  });
});
