"""The project's own in-store content: shop categories, their packages and vouchers, shop
features, restrictions, and phrasings.

Written for servicegym (no third-party text). Prices are in yuan, as in VitaBench. Places and
people come from the delivery content (``content_delivery``), so the two domains share a map.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# a product type: (phrase the user says, product name, price, tags). For booking categories the
# name is a set meal or package sized by party (" for N" is appended) and the price is per person.
ProductType = tuple[str, str, float, tuple[str, ...]]


@dataclass(frozen=True)
class Category:
    """One kind of shop: how it is visited (a seat ``book``ing or a service ``reservation``), its
    name stems, what it sells, the features a user may insist on and the restrictions that apply."""

    kind: Literal["book", "reservation"]
    stems: tuple[str, ...]
    tags: tuple[str, ...]
    products: tuple[ProductType, ...]
    features: tuple[str, ...]
    restrictions: tuple[str, ...]


CATEGORIES: dict[str, Category] = {
    "hot pot": Category(
        "book",
        ("Red Ember Hot Pot", "Bubbling Cauldron", "Old Town Hot Pot", "Copper Pot House"),
        ("Hot pot", "Sichuan flavour", "Group dining"),
        (
            ("beef tallow hot pot", "Beef Tallow Spicy Hot Pot Set", 78, ("Spicy", "Beef")),
            ("mushroom broth hot pot", "Wild Mushroom Broth Hot Pot Set", 68, ("Mild", "Vegetarian")),
            ("tomato broth hot pot", "Tomato Broth Hot Pot Set", 72, ("Mild",)),
            ("bone broth hot pot", "Pork Bone Broth Hot Pot Set", 74, ("Mild", "Pork")),
        ),
        ("Private Room", "Free Parking", "Open Late", "Kids Play Area"),
        ("Contains alcohol", "Seafood", "Spicy", "Beef"),
    ),
    "Cantonese restaurant": Category(
        "book",
        ("Pearl River Kitchen", "Jade Garden Canteen", "Harbour Tea House", "Lychee Court"),
        ("Cantonese cuisine", "Dim sum", "Family dining"),
        (
            ("dim sum brunch", "Dim Sum Brunch Set", 58, ("Steamed", "Pork")),
            ("roast goose dinner", "Roast Goose Feast Set", 98, ("Roast",)),
            ("clay pot rice dinner", "Clay Pot Rice Set", 62, ("Pork",)),
            ("steamed fish dinner", "Steamed Garoupa Set", 118, ("Seafood", "Steamed")),
        ),
        ("Private Room", "Free Parking", "Kids Play Area", "Window Seats"),
        ("Contains alcohol", "Seafood", "Spicy", "Pork"),
    ),
    "Japanese restaurant": Category(
        "book",
        ("Sakura Table", "Kaiyo Dining", "Moonlit Izakaya", "Hinoki House"),
        ("Japanese cuisine", "Sushi", "Quiet"),
        (
            ("sushi dinner", "Chef's Sushi Set", 128, ("Seafood", "Raw")),
            ("teppanyaki dinner", "Teppanyaki Grill Set", 138, ("Beef",)),
            ("ramen meal", "Ramen and Gyoza Set", 58, ("Pork",)),
            ("tempura dinner", "Vegetable Tempura Set", 76, ("Fried", "Vegetarian")),
        ),
        ("Private Room", "Counter Seats", "Free Parking", "Open Late"),
        ("Contains alcohol", "Seafood", "Spicy", "Beef", "Pork"),
    ),
    "karaoke": Category(
        "book",
        ("Starlight KTV", "Echo Box Karaoke", "Melody Lounge", "Neon Mic Club"),
        ("Karaoke", "Party", "Private rooms"),
        (
            ("evening karaoke session", "Evening Karaoke Package (3 hours)", 69, ("Snacks",)),
            ("afternoon karaoke session", "Afternoon Karaoke Package (3 hours)", 45, ("Snacks", "Fruit platter")),
            ("late-night karaoke session", "Late-Night Karaoke Package (4 hours)", 79, ("Snacks", "Late night")),
        ),
        ("Free Parking", "Party Room", "Open Late", "Themed Rooms"),
        ("Contains alcohol", "Spicy"),
    ),
    "spa": Category(
        "reservation",
        ("Lotus Calm Spa", "Still Water Wellness", "Bamboo Breeze Spa", "Silk Touch Retreat"),
        ("Spa", "Massage", "Relaxation"),
        (
            ("deep tissue massage", "Deep Tissue Massage (60 min)", 198, ("Massage", "Strong pressure")),
            ("foot reflexology session", "Foot Reflexology (45 min)", 128, ("Foot care",)),
            ("back and shoulder massage", "Back and Shoulder Massage (45 min)", 158, ("Massage",)),
            ("facial treatment", "Hydrating Facial (60 min)", 238, ("Facial", "Skin care")),
        ),
        ("Private Suite", "Free Parking", "Couples Room", "Sauna"),
        ("Essential oils", "Hot stone"),
    ),
    "fitness": Category(
        "reservation",
        ("Ironworks Gym", "Pulse Fitness Club", "Summit Athletics", "Core Motion Studio"),
        ("Gym", "Fitness", "Professional coach"),
        (
            ("personal training trial", "Personal Training Trial Session", 99, ("Personal coach", "Beginner friendly")),
            ("swimming lesson", "Swimming Lesson Trial", 88, ("Swimming", "Beginner friendly")),
            ("pilates class", "Pilates Reformer Trial Class", 128, ("Low impact",)),
            ("boxing class", "Boxing Fundamentals Class", 109, ("Cardio",)),
        ),
        ("Swimming Pool", "Free Parking", "Open 24 Hours", "Sauna"),
        ("High intensity",),
    ),
    "hair salon": Category(
        "reservation",
        ("Scissor and Comb Studio", "Mane Street Salon", "Glow Hair Atelier", "Crown Hair Lab"),
        ("Hair salon", "Styling", "Hair care"),
        (
            ("haircut and styling", "Haircut and Styling", 88, ("Haircut",)),
            ("scalp care treatment", "Scalp Care Treatment", 168, ("Scalp care",)),
            ("keratin treatment", "Keratin Smoothing Treatment", 388, ("Smoothing",)),
            ("hair coloring", "Hair Coloring (Short Hair)", 298, ("Coloring", "Chemical dye")),
        ),
        ("Senior Stylist", "Free Parking", "Kids Friendly", "Open Late"),
        ("Chemical dye",),
    ),
    "yoga studio": Category(
        "reservation",
        ("Quiet Lotus Yoga", "Sunrise Flow Studio", "Balance Yoga Loft", "Breath Space Yoga"),
        ("Yoga", "Meditation", "Small classes"),
        (
            ("hatha yoga class", "Hatha Yoga Drop-in Class", 79, ("Beginner friendly",)),
            ("yin yoga class", "Yin Yoga Relaxation Class", 89, ("Relaxation",)),
            ("aerial yoga class", "Aerial Yoga Trial Class", 139, ("Aerial",)),
            ("meditation session", "Guided Meditation Session", 69, ("Meditation", "Relaxation")),
        ),
        ("Free Parking", "Showers", "Small Classes", "Mat Provided"),
        ("High intensity", "Hot room"),
    ),
}

# restriction tag -> (how the user says it, how the user's history notes it, variant name template)
RESTRICTIONS: dict[str, tuple[str, str, str]] = {
    "Contains alcohol": ("I don't drink alcohol, so nothing that comes with alcohol.", "No alcohol", "{} with Beer Tower"),
    "Seafood": ("I'm allergic to seafood.", "Seafood allergy", "{} with Seafood Platter"),
    "Spicy": ("I can't handle spicy food at all.", "Not spicy please", "Fiery {}"),
    "Beef": ("I don't eat beef.", "No beef", "{} with Wagyu Beef"),
    "Pork": ("I don't eat pork.", "No pork", "{} with Char Siu Pork"),
    "Essential oils": ("I'm allergic to essential oils.", "Allergic to essential oils", "Aromatherapy {}"),
    "Hot stone": ("My doctor told me to avoid heat treatments for now.", "Avoid heat treatments", "Hot Stone {}"),
    "High intensity": ("I hurt my knee recently, so nothing high-intensity.", "Recovering from a knee injury", "Power {}"),
    "Hot room": ("I faint easily in hot rooms, so no heated classes.", "Avoid heated rooms", "Hot {}"),
    "Chemical dye": ("My scalp is sensitive, so no chemical dyes.", "Sensitive scalp, no dyes", "{} with Color Gloss"),
}

# shop feature tag -> how the user asks for it
FEATURE_REASON: dict[str, str] = {
    "Private Room": "We'd like a private room, so the place must have one.",
    "Free Parking": "I'll drive there, so it must have free parking.",
    "Open Late": "We may stay late, so it should be a place that is open late.",
    "Kids Play Area": "I'm bringing my kid, so it needs a kids play area.",
    "Window Seats": "I'd love window seats, so the place should have them.",
    "Counter Seats": "I enjoy watching the chef, so it should have counter seats.",
    "Party Room": "It's a celebration, so the place needs a party room.",
    "Themed Rooms": "Pick a place with themed rooms, that's more fun.",
    "Private Suite": "I want privacy, so the spa must have private suites.",
    "Couples Room": "It should have a couples room.",
    "Sauna": "I want to use a sauna afterwards, so it must have one.",
    "Swimming Pool": "I want to swim afterwards, so the gym must have a pool.",
    "Open 24 Hours": "My schedule is irregular, so it should be open 24 hours.",
    "Senior Stylist": "I only trust senior stylists, so the salon must have one.",
    "Kids Friendly": "My kid may come along, so it should be kids friendly.",
    "Showers": "I go to work right after, so the studio must have showers.",
    "Small Classes": "I prefer small classes.",
    "Mat Provided": "I don't have a mat, so the studio must provide one.",
}

OPENINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "book": {
        "polite": ("Hi, could you help me arrange a {item} at a {category}?", "Hello! I'd like to go out for a {item}. Could you help?"),
        "terse": ("Need a {item} at a {category}.", "Arrange a {item}."),
        "impatient": ("I want a {item}, sort it out quickly please.", "Get me a table for a {item}, fast."),
        "chatty": ("Hey! We've been talking about a {item} all week, can you set it up?",
                   "Hi there! I'm in the mood for a {item} at a nice {category}. Can you help me arrange it?"),
    },
    "reservation": {
        "polite": ("Hi, could you help me book a {item}?", "Hello! I'd like to try a {item} at a {category}. Could you help?"),
        "terse": ("Book a {item}.", "Need a {item}."),
        "impatient": ("I need a {item}, quickly please.", "Get me a {item} booked, I don't have much time."),
        "chatty": ("Hi! I've been so stressed lately, I really want a {item}. Can you help me set it up?",
                   "Hey there! A friend recommended trying a {item} at a {category}. Could you arrange one for me?"),
    },
}
