import { LoaderCircle } from "lucide-react";

/** What a chat shows under its header while the server reads its messages. */
export default function OpeningChat() {
  return (
    <div role="status" className="flex flex-1 items-center justify-center gap-2 text-sm text-muted">
      <LoaderCircle
        size={16}
        className="animate-spin motion-reduce:animate-none"
        aria-hidden="true"
      />
      Opening the chat…
    </div>
  );
}
