/**
 * The glossary of docs/model.md, served at /docs/glossary beside the API reference (the image
 * ships no docs/ folder). Each row is the file's row word for word, in its Markdown; a test keeps
 * the two the same.
 */
export interface GlossaryRow {
  /** What the interface documents say. */
  term: string;
  /** What it is in Keyward. */
  keyward: string;
  /** The words a license platform usually has for it. */
  elsewhere: string;
}

export const GLOSSARY_INTRO =
  "The interface documents (the order service's and the member center's) have words of their own. Beside each, what it is here, and the words a license platform usually has for it.";

export const GLOSSARY: readonly GlossaryRow[] = [
  {
    term: '**order op 1–9**',
    keyward:
      "the order service's nine operations, numbered as its document lists them: the side that sells (customers, license orders, locks, asset numbers); scope `auth_order`",
    elsewhere: 'vendor or reseller API, provisioning',
  },
  {
    term: '**member op 1–10**',
    keyward:
      "the member center's ten operations: the buying enterprise's administrator manages its employees and hands them assets; scope `auth_me` and a member's `userToken`",
    elsewhere: 'customer portal, user and seat assignment',
  },
  {
    term: '**channel**',
    keyward:
      "a system that sells licenses (a CRM, a shop), named by a code; an application sees only its channels' customers",
    elsewhere: 'reseller, sales channel, storefront',
  },
  {
    term: '**customer**',
    keyward:
      'a buyer as one channel knows it (`channelCustomerId`) or as a CRM does (`crmCustomerId`); bound to one enterprise, which may have several',
    elsewhere: "the buyer's account in a CRM, bill-to party",
  },
  {
    term: '**enterprise** (master account)',
    keyward: 'the organization that uses the licenses: its members, and the assets of its customers',
    elsewhere: 'customer, tenant, organization',
  },
  {
    term: '**member**, employee',
    keyward: 'a person of an enterprise, `user@code`; the administrator `admin@code` is one',
    elsewhere: 'user, end user',
  },
  {
    term: '**license order**',
    keyward:
      'one order of a batchOrder call (order op 5): buys assets (`new_buy`) or revokes assets or products',
    elsewhere: 'order, entitlement grant or revocation',
  },
  {
    term: '**asset**, asset number',
    keyward:
      "what licenses are put on: a USB lock, a certificate or a cloud account (`licenseType`), with a number (Keyward's own: 10 digits)",
    elsewhere: 'license, license key, dongle, serial number',
  },
  {
    term: '**product** (product instance)',
    keyward: 'a product on one asset, with its limits: `limitConcurrent` nodes, dates, usage time, amount',
    elsewhere: 'entitlement, feature, license line',
  },
  {
    term: '**gmsPid**, `productUri`',
    keyward:
      "the product's id in the vendor's catalogue, the one licensed software names (`productUri` is a gmsPid or an appKey); `crmProductId` is the CRM's id for the same line",
    elsewhere: 'product id, SKU, feature code',
  },
  {
    term: '**merchandise**',
    keyward: 'a package of products, nesting into a tree on the asset',
    elsewhere: 'bundle, suite',
  },
  {
    term: '**`limitConcurrent`**, nodes',
    keyward: 'how many copies may run at once',
    elsewhere: 'seats, concurrent users',
  },
  {
    term: '**shellnums** (order op 9)',
    keyward:
      "issues asset numbers ahead of an order: the number printed on a lock's shell (`keyShellNumber`), first digit the region",
    elsewhere: 'license key or serial number generation',
  },
  {
    term: '**borrowed lock**, lent lock',
    keyward:
      'a lock bought with `borrowedUsbKey: true`, carried by one member, onto which members lend the products of their own assets (member op 10), one node each; [below](#lending)',
    elsewhere: 'license borrowing, a floating seat on a dongle',
  },
  {
    term: '**assign** (member op 9)',
    keyward: 'gives a member the use of an asset and its products',
    elsewhere: 'assign a seat or a license to a user',
  },
  {
    term: '**HTTP 299**',
    keyward:
      'the status of every refused or failed call: the body\'s `code` (a string such as `"13004"`) and `message` say why; success is HTTP 200 with `code` 0',
    elsewhere: 'an HTTP 4xx error with an error code',
  },
  {
    term: '**gongxin customer**',
    keyward:
      'a flag on the customer order op 2 makes for a CRM ([below](#channels-customers-enterprises-and-members)); nothing depends on it',
    elsewhere: '(none)',
  },
  {
    term: 'lease (the [runtime](runtime.md))',
    keyward:
      'one running copy on one machine, holding one seat, kept by heartbeats; offline, a signed lease that holds until it expires',
    elsewhere: 'activation, checkout of a floating license',
  },
  {
    term: '`fingerprint`',
    keyward: 'the machine a lease is for, as the licensed software identifies it',
    elsewhere: 'machine, device, hardware id',
  },
  {
    term: 'offline [activation](activation.md)',
    keyward: 'a lease for a machine that never reaches Keyward, carried by file or typed code',
    elsewhere: 'offline activation',
  },
];
