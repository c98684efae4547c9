import { LoaderCircle } from "lucide-react";

/**
 * A small turning circle for work on its way. Decorative (the words beside it say what is
 * happening), and still for people who ask for less motion.
 */
export function Spinner({ size = 14 }: { size?: number }) {
  return (
    <LoaderCircle
      size={size}
      className="shrink-0 animate-spin motion-reduce:animate-none"
      aria-hidden="true"
    />
  );
}
