import { MessagesSquare } from "lucide-react";
import { HomeComposer } from "@/components/chat/home-composer";

export default function HomePage() {
  return (
    <div className="flex flex-1 flex-col items-center justify-center gap-3 px-2 pt-14 pb-6 text-center md:pt-6">
      <MessagesSquare className="text-zinc-300" size={40} aria-hidden="true" />
      <h1 className="text-xl font-semibold">Welcome to Fold</h1>
      <p className="max-w-md px-4 text-sm text-muted">
        Type below to start a new chat, or pick up an old one from the sidebar. Fold keeps every
        message and folds old turns into a summary before a conversation outgrows the model's
        context window.
      </p>
      <HomeComposer />
    </div>
  );
}
