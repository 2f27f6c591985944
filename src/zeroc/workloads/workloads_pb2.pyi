from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PaymentMethod(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PAYMENT_METHOD_UNSPECIFIED: _ClassVar[PaymentMethod]
    CREDIT_CARD: _ClassVar[PaymentMethod]
    DEBIT_CARD: _ClassVar[PaymentMethod]
    PAYPAL: _ClassVar[PaymentMethod]
    APPLE_PAY: _ClassVar[PaymentMethod]
    GIFT_CARD: _ClassVar[PaymentMethod]

class DeviceType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEVICE_TYPE_UNSPECIFIED: _ClassVar[DeviceType]
    MOBILE: _ClassVar[DeviceType]
    DESKTOP: _ClassVar[DeviceType]
    TABLET: _ClassVar[DeviceType]
PAYMENT_METHOD_UNSPECIFIED: PaymentMethod
CREDIT_CARD: PaymentMethod
DEBIT_CARD: PaymentMethod
PAYPAL: PaymentMethod
APPLE_PAY: PaymentMethod
GIFT_CARD: PaymentMethod
DEVICE_TYPE_UNSPECIFIED: DeviceType
MOBILE: DeviceType
DESKTOP: DeviceType
TABLET: DeviceType

class Item(_message.Message):
    __slots__ = ("product_id", "quantity", "price")
    PRODUCT_ID_FIELD_NUMBER: _ClassVar[int]
    QUANTITY_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    product_id: int
    quantity: int
    price: float
    def __init__(self, product_id: _Optional[int] = ..., quantity: _Optional[int] = ..., price: _Optional[float] = ...) -> None: ...

class Address(_message.Message):
    __slots__ = ("street", "city", "postal_code", "country")
    STREET_FIELD_NUMBER: _ClassVar[int]
    CITY_FIELD_NUMBER: _ClassVar[int]
    POSTAL_CODE_FIELD_NUMBER: _ClassVar[int]
    COUNTRY_FIELD_NUMBER: _ClassVar[int]
    street: str
    city: str
    postal_code: str
    country: str
    def __init__(self, street: _Optional[str] = ..., city: _Optional[str] = ..., postal_code: _Optional[str] = ..., country: _Optional[str] = ...) -> None: ...

class Order(_message.Message):
    __slots__ = ("order_id", "user_id", "timestamp", "items", "shipping_address", "payment_method", "total_amount")
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    SHIPPING_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_METHOD_FIELD_NUMBER: _ClassVar[int]
    TOTAL_AMOUNT_FIELD_NUMBER: _ClassVar[int]
    order_id: str
    user_id: int
    timestamp: int
    items: _containers.RepeatedCompositeFieldContainer[Item]
    shipping_address: Address
    payment_method: PaymentMethod
    total_amount: float
    def __init__(self, order_id: _Optional[str] = ..., user_id: _Optional[int] = ..., timestamp: _Optional[int] = ..., items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ..., shipping_address: _Optional[_Union[Address, _Mapping]] = ..., payment_method: _Optional[_Union[PaymentMethod, str]] = ..., total_amount: _Optional[float] = ...) -> None: ...

class ProductView(_message.Message):
    __slots__ = ("user_id", "product_id", "timestamp", "referrer", "device_type")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PRODUCT_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    REFERRER_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TYPE_FIELD_NUMBER: _ClassVar[int]
    user_id: int
    product_id: int
    timestamp: int
    referrer: str
    device_type: DeviceType
    def __init__(self, user_id: _Optional[int] = ..., product_id: _Optional[int] = ..., timestamp: _Optional[int] = ..., referrer: _Optional[str] = ..., device_type: _Optional[_Union[DeviceType, str]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("user_id", "query", "timestamp", "page", "limit", "filters")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    user_id: int
    query: str
    timestamp: int
    page: int
    limit: int
    filters: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, user_id: _Optional[int] = ..., query: _Optional[str] = ..., timestamp: _Optional[int] = ..., page: _Optional[int] = ..., limit: _Optional[int] = ..., filters: _Optional[_Iterable[str]] = ...) -> None: ...
