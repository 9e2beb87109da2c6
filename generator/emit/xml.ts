/** Escapes the five characters XML gives meaning to, for text and attribute values alike. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>'"]/g, (character) => XML_ENTITIES[character]!);
}

const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', "'": '&apos;', '"': '&quot;' };
