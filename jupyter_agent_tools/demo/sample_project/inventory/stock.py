"""Items and the stock that holds them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 0

    def value(self) -> float:
        return self.price * self.quantity


@dataclass
class Stock:
    items: dict[str, Item] = field(default_factory=dict)

    def add(self, item: Item) -> None:
        if item.name in self.items:
            self.items[item.name].quantity += item.quantity
        else:
            self.items[item.name] = item

    def total_value(self) -> float:
        total = 0.0
        for item in self.items.values():
            total += item.value()
        return total

    def report(self) -> None:
        for name, item in sorted(self.items.items()):
            print(name, item.quantity, item.value())
