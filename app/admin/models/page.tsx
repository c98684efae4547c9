import type { Metadata } from "next";
import { ModelsAdmin } from "@/components/admin/models-admin";
import { requirePageAdmin } from "@/lib/admin/page-guard";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Models · Admin · Fold" };

export default async function AdminModelsPage() {
  await requirePageAdmin();
  return <ModelsAdmin />;
}
