/**
 * Short notices that need no answer ("Nothing to compact yet", "Copied"). The Toaster lives in
 * the root layout (components/ui/theme.tsx); call `toast("…")`, `toast.success`, `toast.error`.
 */
export { toast } from "sonner";
