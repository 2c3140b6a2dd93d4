"""Build a stock and print its report."""

from inventory.stock import Item, Stock


def build() -> Stock:
    stock = Stock()
    stock.add(Item("apple", 0.5, 10))
    stock.add(Item("pear", 0.75, 4))
    stock.add(Item("apple", 0.5, 2))
    return stock


def main() -> None:
    stock = build()
    stock.report()
    print("total", stock.total_value())


if __name__ == "__main__":
    main()
