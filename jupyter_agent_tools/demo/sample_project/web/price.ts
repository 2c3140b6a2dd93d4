export interface Priced {
  name: string;
  price: number;
}

export function formatPrice(item: Priced): string {
  console.log("formatting", item.name);
  return `${item.name}: ${item.price.toFixed(2)}`;
}

export function cheapest(items: Priced[]): Priced | undefined {
  return items.reduce<Priced | undefined>(
    (best, item) => (best === undefined || item.price < best.price ? item : best),
    undefined,
  );
}
