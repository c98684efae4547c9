import type { Metadata } from "next";
import { StatusPage } from "@/components/status/status-page";

export const metadata: Metadata = { title: "Not found · Fold" };

export default function NotFound() {
  return (
    <StatusPage code={404} title="This page does not exist">
      The link may be old, or the chat was deleted. Your other chats are where you left them.
    </StatusPage>
  );
}
