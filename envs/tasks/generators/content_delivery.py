"""The project's own delivery content: cuisines, dishes, tags, places, people and phrasings.

Written for servicegym (no third-party text). Prices are in yuan, as in VitaBench.
"""

from __future__ import annotations

# cuisine -> (store name stems, {dish type: [(dish name, base price, tags)]})
CUISINES: dict[str, tuple[tuple[str, ...], dict[str, list[tuple[str, float, tuple[str, ...]]]]]] = {
    "noodles": (
        ("Golden Thread Noodle House", "Old Street Noodles", "Hand-Pulled Noodle Bar", "Riverbank Noodle Shop"),
        {
            "beef noodle soup": [("Braised Beef Noodle Soup", 28, ("Beef", "Soup")), ("Spicy Beef Brisket Noodles", 32, ("Beef", "Spicy", "Soup"))],
            "dan dan noodles": [("Dan Dan Noodles", 22, ("Pork", "Spicy", "Contains peanuts")), ("Sesame Dan Dan Noodles", 24, ("Contains sesame", "Mild"))],
            "cold noodles": [("Sichuan Cold Noodles", 18, ("Spicy", "Contains peanuts")), ("Cucumber Cold Noodles", 16, ("Vegetarian", "Light"))],
        },
    ),
    "dumplings": (
        ("Jade Dumpling Kitchen", "Grandma Li's Dumplings", "Northern Dumpling House", "Little Lantern Dumplings"),
        {
            "dumplings": [("Pork and Cabbage Dumplings", 26, ("Pork",)), ("Shrimp Dumplings", 34, ("Seafood",)), ("Mushroom Vegetable Dumplings", 24, ("Vegetarian",))],
            "fried dumplings": [("Pan-Fried Pork Dumplings", 25, ("Pork", "Fried")), ("Crispy Chicken Potstickers", 27, ("Chicken", "Fried"))],
            "wonton soup": [("Shrimp Wonton Soup", 24, ("Seafood", "Soup")), ("Pork Wonton Soup", 20, ("Pork", "Soup", "Light"))],
        },
    ),
    "rice bowls": (
        ("Bento Corner", "Harvest Rice Bowl", "Claypot Rice Studio", "Sunny Rice Kitchen"),
        {
            "chicken rice bowl": [("Teriyaki Chicken Rice Bowl", 30, ("Chicken",)), ("Kung Pao Chicken Rice", 28, ("Chicken", "Spicy", "Contains peanuts"))],
            "claypot rice": [("Cantonese Sausage Claypot Rice", 36, ("Pork",)), ("Mushroom Claypot Rice", 32, ("Vegetarian",))],
            "curry rice": [("Japanese Beef Curry Rice", 34, ("Beef", "Contains dairy")), ("Vegetable Curry Rice", 29, ("Vegetarian", "Contains dairy"))],
        },
    ),
    "burgers": (
        ("Stack Burger Co.", "Grill Lab Burgers", "Brick Oven Burgers", "Smoky Patty Shack"),
        {
            "burger": [("Classic Beef Burger", 38, ("Beef", "Contains dairy")), ("Crispy Chicken Burger", 34, ("Chicken", "Fried")), ("Garden Veggie Burger", 32, ("Vegetarian",))],
            "fries": [("Seasoned Fries", 15, ("Vegetarian", "Fried")), ("Cheese Fries", 19, ("Fried", "Contains dairy"))],
        },
    ),
    "salads": (
        ("Green Leaf Salad Bar", "Fresh Bowl Salads", "Light Table"),
        {
            "salad": [("Grilled Chicken Caesar Salad", 36, ("Chicken", "Contains dairy", "Low-fat")), ("Quinoa Garden Salad", 32, ("Vegetarian", "Low-fat", "Light")), ("Salmon Poke Salad", 45, ("Seafood", "Low-fat"))],
            "wrap": [("Chicken Avocado Wrap", 29, ("Chicken", "Light")), ("Falafel Wrap", 26, ("Vegetarian", "Fried"))],
        },
    ),
    "hotpot": (
        ("Red Lantern Hotpot", "Mala Pot Express", "Chongqing Spice Pot"),
        {
            "spicy pot": [("Mala Dry Pot with Beef", 48, ("Beef", "Spicy")), ("Mala Dry Pot with Shrimp", 56, ("Seafood", "Spicy"))],
            "soup pot": [("Tomato Soup Pot", 42, ("Soup", "Mild", "Vegetarian")), ("Mushroom Broth Pot", 44, ("Soup", "Mild", "Vegetarian"))],
        },
    ),
    "porridge": (
        ("Morning Congee House", "Warm Bowl Porridge", "Slow Simmer Congee"),
        {
            "congee": [("Century Egg and Pork Congee", 16, ("Pork", "Light", "Mild")), ("Seafood Congee", 26, ("Seafood", "Light")), ("Pumpkin Millet Porridge", 12, ("Vegetarian", "Light", "Mild"))],
            "steamed buns": [("Pork Soup Dumplings", 18, ("Pork",)), ("Vegetable Steamed Buns", 12, ("Vegetarian",))],
        },
    ),
    "drinks": (
        ("Cloud Tea House", "Boba Garden", "Citrus Lab"),
        {
            "milk tea": [("Brown Sugar Boba Milk Tea", 18, ("Contains dairy", "Caffeine")), ("Taro Milk Tea", 17, ("Contains dairy", "Caffeine"))],
            "fruit tea": [("Fresh Lemon Green Tea", 14, ("Caffeine", "Light")), ("Mango Pomelo Sago", 20, ("Contains dairy",))],
        },
    ),
}

# dish attributes: option lists by dish type family
ATTRIBUTE_SETS = {
    "spice": ["Mild", "Medium spicy", "Extra spicy"],
    "sugar": ["No sugar", "Half sugar", "Full sugar"],
    "size": ["Regular", "Large"],
}
DISH_ATTRIBUTE = {"milk tea": "sugar", "fruit tea": "sugar", "fries": "size", "burger": "size", "salad": "size", "wrap": "size"}

# diet restriction -> (forbidden tag, how the user says it, how past orders hint at it)
DIETS = {
    "peanut allergy": ("Contains peanuts", "I'm allergic to peanuts, so nothing with peanuts.", "No peanuts please, allergy"),
    "no seafood": ("Seafood", "I don't eat seafood.", "No seafood please"),
    "no pork": ("Pork", "I don't eat pork.", "No pork please"),
    "avoid fried": ("Fried", "My doctor told me to avoid fried food.", "Nothing fried please"),
    "lactose intolerance": ("Contains dairy", "I'm lactose intolerant, so no dairy.", "No dairy, lactose intolerant"),
    "no spicy": ("Spicy", "I can't handle spicy food at all.", "Not spicy at all please"),
    "no beef": ("Beef", "I don't eat beef.", "No beef please"),
}

STORE_TAGS = ("Dine-in available", "Brand chain", "Quick service", "Free cutlery", "Eco packaging", "Late-night")
STORE_TAG_REASON = {
    "Dine-in available": "I'd rather it be a proper restaurant with dine-in, not a delivery-only kitchen.",
    "Brand chain": "I trust the big brand chains more.",
    "Quick service": "It should be one of the quick-service places.",
    "Free cutlery": "I have no cutlery here, so the store must offer free cutlery.",
    "Eco packaging": "Please pick a store that uses eco-friendly packaging.",
    "Late-night": "Pick a late-night store, I like their kitchens.",
}

NOTES = {
    "no cilantro": ("Please add a note: no cilantro.", ("cilantro",)),
    "extra napkins": ("Please add a note asking for extra napkins.", ("napkin",)),
    "call on arrival": ("Please note that the rider should call me on arrival.", ("call",)),
    "leave at reception": ("Please note that it should be left at the reception desk.", ("reception",)),
}

CITIES = {
    "Shanghai": (121.4737, 31.2304, ("Xuhui", "Jing'an", "Huangpu", "Changning")),
    "Hangzhou": (120.1551, 30.2741, ("Xihu", "Gongshu", "Binjiang")),
    "Chengdu": (104.0665, 30.5728, ("Wuhou", "Jinjiang", "Qingyang")),
    "Beijing": (116.4074, 39.9042, ("Chaoyang", "Haidian", "Dongcheng")),
    "Shenzhen": (114.0579, 22.5431, ("Nanshan", "Futian", "Luohu")),
}
STREETS = ("Maple", "Lotus", "Riverside", "Harbor", "Garden", "Spring", "Pine", "Willow", "Orchard", "Bamboo", "Lantern", "Silk")
BUILDINGS = ("Tower A", "Building 3", "Innovation Park", "Sunrise Plaza", "Unit 12", "Block 7")

FIRST_NAMES = ("Lin", "Chen", "Wang", "Zhao", "Liu", "Sun", "Zhou", "Wu", "Xu", "Ma", "Hu", "Guo")
OCCUPATIONS = ("software engineer", "nurse", "teacher", "accountant", "designer", "student", "lawyer", "sales manager", "doctor", "researcher")
PERSONALITIES = {
    "polite": "Calm and courteous; answers what is asked.",
    "terse": "Busy and brief; says as little as possible.",
    "impatient": "Impatient; wants things done quickly.",
    "chatty": "Friendly and talkative.",
}

OPENINGS = {
    "polite": ("Hi, could you help me order some {dish}?", "Hello! I'd like to get some {dish} delivered, please."),
    "terse": ("Order {dish}.", "Need {dish} delivered."),
    "impatient": ("I want {dish}, quickly please.", "Get me some {dish}, I'm starving."),
    "chatty": ("Hey there! I've been craving {dish} all day, can you help me order some?", "Hi! Today feels like a {dish} kind of day. Can you order some for me?"),
}
