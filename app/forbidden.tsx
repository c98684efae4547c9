import type { Metadata } from "next";
import { StatusPage } from "@/components/status/status-page";

export const metadata: Metadata = { title: "No access · Fold" };

export default function Forbidden() {
  return (
    <StatusPage code={403} title="This page is for admins">
      Your account can chat, but only an admin of this server can open this page. Ask one if you
      need something changed here.
    </StatusPage>
  );
}
