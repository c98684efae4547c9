import { describe, expect, it } from "vitest";
import { disabledSignInHref, returnPath, signInHref } from "@/lib/auth/return-path";

describe("the page to return to after signing in", () => {
  it("takes a page of this server, its query kept", () => {
    expect(returnPath("/chat/4f0c")).toBe("/chat/4f0c");
    expect(returnPath("/admin/users?q=ada")).toBe("/admin/users?q=ada");
  });

  it("refuses anything that would leave the server or is not a path", () => {
    for (const value of [
      "https://evil.example/",
      "//evil.example/",
      "/\\evil.example",
      "javascript:alert(1)",
      "chat/4f0c",
      "/chat/\n4f0c",
      "",
      undefined,
      ["/chat/1", "/chat/2"],
      `/${"x".repeat(2_000)}`,
    ]) {
      expect(returnPath(value), JSON.stringify(value)).toBeNull();
    }
  });

  it("does not return to the home page or the sign-in pages themselves", () => {
    for (const value of ["/", "/login", "/login?next=/chat/1", "/register", "/waiting"]) {
      expect(returnPath(value), value).toBeNull();
    }
    expect(returnPath("/loginx")).toBe("/loginx");
  });

  it("names the page in the sign-in address", () => {
    expect(signInHref("/chat/4f0c?x=1&y=2")).toBe("/login?next=%2Fchat%2F4f0c%3Fx%3D1%26y%3D2");
    expect(signInHref(null)).toBe("/login");
    expect(signInHref("/chat/1", "/register")).toBe("/register?next=%2Fchat%2F1");
  });

  it("adds why to the sign-in address of a browser whose account was disabled", () => {
    expect(disabledSignInHref("/chat/4f0c?x=1")).toBe(
      "/login?next=%2Fchat%2F4f0c%3Fx%3D1&reason=disabled",
    );
    expect(disabledSignInHref(null)).toBe("/login?reason=disabled");
  });
});
