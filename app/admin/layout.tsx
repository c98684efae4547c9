import type { ReactNode } from "react";

/** Admin pages sit in one `main` landmark, so assistive tech can jump straight to them. */
export default function AdminLayout({ children }: { children: ReactNode }) {
  return (
    <main id="main" className="h-full">
      {children}
    </main>
  );
}
