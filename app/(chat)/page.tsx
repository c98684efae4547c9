import { MessagesSquare } from "lucide-react";

export default function HomePage() {
  return (
    <div className="flex flex-1 flex-col items-center justify-center gap-3 px-6 pt-14 text-center md:pt-0">
      <MessagesSquare className="text-zinc-300" size={40} />
      <h1 className="text-xl font-semibold">Welcome to Fold</h1>
      <p className="max-w-md text-sm text-muted">
        Start a new chat from the sidebar, or pick up an old one. Fold keeps every message and folds
        old turns into a summary before a conversation outgrows the model's context window.
      </p>
    </div>
  );
}
