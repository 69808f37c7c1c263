"""``item_topic`` and ``spec_topic`` (``rewards/nl_rubric/topic.py``): the kind an item is about,
from its words in English and Chinese, and from its compiled spec. My own sentences, not VitaBench's."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicegym.rewards import nl_rubric
from servicegym.rewards.nl_rubric import item_topic, spec_topic
from tests.rewards.nl_rubric.worlds import K, M, Z

TOPIC_CASES: list[tuple[str, str]] = [
    # time: a clock time, a duration, "as soon as possible", a time subject
    ("The sushi should be delivered around 12:30 tomorrow", "time"),
    ("The spa appointment time should be no later than 4 pm", "time"),
    ("The medicine must arrive within 30 minutes", "time"),
    ("The order should be delivered as soon as possible", "time"),
    ("早餐订单应在明天上午8点前送达", "time"),
    ("按摩店的预约时间应为下午3点半", "time"),
    ("药品订单应尽快送达", "time"),
    # date: a day without a clock
    ("The museum tickets should be for July 12, 2025", "date"),
    ("The boat tour booking should be valid on the day after tomorrow", "date"),
    ("门票的使用日期应为2025年7月12日", "date"),
    # address
    ("The delivery address should be Room 5, 88 Lakeview Road, Hangzhou", "address"),
    ("The flowers should be delivered to 88 Lakeview Road, Hangzhou", "address"),
    ("鲜花订单的配送地址应为杭州市湖景路88号", "address"),
    # store
    ("The coffee must be ordered from Harbour Beans", "store"),
    ("The bakery chosen for the cake should be Crumb & Co", "store"),
    ("The dessert shop should be pet-friendly", "store"),
    ("咖啡订单应选择港湾咖啡作为商家", "store"),
    ("甜品订单的商家需要支持可堂食服务", "store"),
    # product
    ("The lunch order must include a chicken salad", "product"),
    ("The dishes at the noodle restaurant should be vegetarian", "product"),
    ("The dinner should be a set meal for two", "product"),
    ("午餐订单应包含鸡肉沙拉", "product"),
    ("火锅订单的商品应为双人套餐", "product"),
    # option
    ("The latte should be iced with less sugar", "option"),
    ("The ramen should be mild", "option"),
    ("The cup size of the milk tea should be large", "option"),
    ("奶茶应选择少冰", "option"),
    ("给孩子点的面条不能是辣的", "option"),
    # quantity
    ("The number of guests for the dinner reservation should be 6", "quantity"),
    ("The karaoke booking should be for five people", "quantity"),
    ("The juice order should include 4 cups", "quantity"),
    ("包间预订人数应为8人", "quantity"),
    ("早餐订单中的商品数量应为3份", "quantity"),
    # price
    ("The total price of the lunch order should be around 80 yuan", "price"),
    ("The latte should cost no more than 30 yuan", "price"),
    ("晚餐订单的总价应在200元以内", "price"),
    # rating
    ("The hotel's rating must be at least 4.2", "rating"),
    ("The pool should be at most 3 km from the hotel", "distance"),
    ("The bakery should have a rating of 4.6 or above", "rating"),
    ("烘焙店的评分应在4.6分及以上", "rating"),
    # distance
    ("The gym should be within 2 km of the user's office", "distance"),
    ("The park chosen should be the nearest one", "distance"),
    ("健身房应在距离公司2公里以内", "distance"),
    # status
    ("Cancel the taxi booking with id B2025070401", "status"),
    ("The bubble tea order status should be cancelled", "status"),
    ("The hotel reservation should be paid", "status"),
    ("成功取消用户的蛋糕订单", "status"),
    # note
    ("The dumpling order should include a note asking for extra vinegar", "note"),
    ("The note should say 'leave it at the door'", "note"),
    ("饺子订单需要备注多放醋", "note"),
    # process: a look-up alone; with a conclusion, the conclusion decides
    ("Must check the weather forecast for the picnic day", "process"),
    ("需要查询用户的历史订单", "process"),
    ("Need to query the user's history to find the usual bakery, so the order should be from Crumb & Co", "store"),
    ("需要查询用户常去的面馆，所以订单应选择老王面馆作为商家", "store"),
    # other
    ("The agent should be polite", "other"),
    ("The climbing gym should have opened at least five years ago", "other"),
    ("服务人员应该态度友好", "other"),
    ("", "other"),
]


@pytest.mark.parametrize(("text", "topic"), TOPIC_CASES)
def test_item_topic(text: str, topic: str) -> None:
    assert item_topic(text) == topic, text


def test_every_topic_has_examples() -> None:
    assert {t for _, t in TOPIC_CASES} == set(nl_rubric.TOPICS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_item_topic_never_raises(text: str) -> None:
    assert item_topic(text) in nl_rubric.TOPICS


@pytest.mark.parametrize(("spec", "topic"), [
    (nl_rubric.TimeWindow(subject="delivery", relation="around", earliest=datetime(2025, 6, 21, 12, 30),
                          latest=datetime(2025, 6, 21, 12, 30), tolerance_min=15.0), "time"),
    (nl_rubric.TimeWindow(subject="visit", relation="between", earliest=datetime(2025, 6, 21, 0, 0),
                          latest=datetime(2025, 6, 21, 23, 59, 59)), "date"),
    (nl_rubric.AddressSpec(address="88 lakeview road"), "address"),
    (nl_rubric.StoreSpec(place_ids=["S1"], name="noodle house"), "store"),
    (nl_rubric.FeatureSpec(scope="product", phrases=["beef noodles"]), "product"),
    (nl_rubric.FeatureSpec(scope="product", phrases=["hot"], option_only=True), "option"),
    (nl_rubric.FeatureSpec(scope="place", phrases=["pet-friendly"]), "store"),
    (nl_rubric.CountSpec(what="people", value=4), "quantity"),
    (nl_rubric.PriceSpec(scope="total", high=80.0), "price"),
    (nl_rubric.RatingSpec(op=">=", value=4.5), "rating"),
    (nl_rubric.DistanceSpec(reference="home", longitude=121.58, latitude=38.9, max_m=1000.0), "distance"),
    (nl_rubric.StatusSpec(status="cancelled"), "status"),
    (nl_rubric.NoteSpec(text="no cilantro"), "note"),
    (nl_rubric.ProcessSpec(action="weather", tools=["weather"]), "process"),
    (nl_rubric.AllOf(parts=[nl_rubric.ProcessSpec(action="orders", tools=["get_user_all_orders"]),
                            nl_rubric.StoreSpec(place_ids=["S1"], name="noodle house")]), "process"),
    (None, "other"),
], ids=lambda x: getattr(x, "kind", None) or (x if isinstance(x, str) else "none"))
def test_spec_topic(spec: object, topic: str) -> None:
    assert spec_topic(spec) == topic


@pytest.mark.parametrize(("compile_", "text"), [
    (K, "The delivery time for the noodle order should be around 12:30"),
    (K, "The delivery address should be Room 802, Building 1, Jianlong Garden, Shahekou District, Dalian"),
    (K, "The order should be placed at Noodle House"),
    (K, "The drink should be caffeine-free, not oolong tea"),
    (K, "The temperature of the tea should be hot"),
    (K, "The restaurant rating should be 4.5 or above"),
    (K, "The number of people for the restaurant reservation should be 4"),
    (K, "Total price of the noodle order should be around 50 yuan"),
    (K, "The noodle order should include a note requesting no cilantro, to suit the user's taste"),
    (K, "Cancel the order with order ID M0000001O01"),
    (K, "Must check the weather forecast for tomorrow"),
    (M, "The hotpot order should be a single-person meal"),
    (Z, "奶茶订单应选择青禾茶铺品牌的商家"),
    (Z, "馄饨订单中的商品规格需为不辣"),
])
def test_the_words_and_the_spec_agree(compile_: object, text: str) -> None:
    spec = compile_(text)  # type: ignore[operator]
    assert spec is not None and item_topic(text) == spec_topic(spec), (text, spec)
