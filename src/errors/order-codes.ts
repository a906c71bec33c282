/** The order service's own codes (order-service.md, Errors). */
export const OrderCode = {
  validation: '13004',
} as const;
