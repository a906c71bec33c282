/** Operators' single sign-on: its link on the sign-in page and the pages of a refused sign-in. */
export const ssoEn = {
  'sso.signIn': 'Sign in with single sign-on',
  'sso.title': 'Single sign-on',
  'sso.signedIn': 'Signed in as {name}. Opening the console…',
  'sso.continue': 'Continue to the console',
  'sso.tryAgain': 'Start single sign-on again',
  'sso.back': 'Back to sign-in',
  'sso.notConfigured': 'Single sign-on is not set up on this server. Sign in with your email and password.',
  'sso.state':
    'This sign-in does not match one started in this browser: it was finished already, took longer than ten minutes, or was started elsewhere. Start again.',
  'sso.noRole':
    'Your account at the sign-in provider is in no group that gives a role in Keyward. Ask an owner to add you to one.',
  'sso.noEmail': 'The sign-in provider did not give your email address, which Keyward needs to name you.',
  'sso.emailUnverified':
    'An operator with your email exists, but the sign-in provider has not verified that the address is yours. Verify it there, or ask an owner.',
  'sso.subjectConflict':
    'The operator with your email is tied to another account at the sign-in provider. Ask an owner.',
  'sso.disabled': 'Your operator account is disabled. Ask an owner.',
  'sso.lastOwner':
    'Your groups at the sign-in provider would take the owner role from the last active owner. Keyward keeps an owner: ask for the owners’ group back, or name another owner first.',
  'sso.taken': 'Another sign-in for the same account was finishing at the same moment. Start again.',
  'sso.unavailable':
    'The sign-in provider cannot be reached just now. Try again in a few minutes; if it lasts, tell the platform’s administrator.',
  'sso.providerRefused': 'The sign-in provider did not let you in ({code}).',
  'sso.mismatch':
    'The sign-in provider’s answer does not belong to this sign-in, so it was not accepted. Start again.',
  'sso.badAnswer':
    'The sign-in provider’s answer could not be accepted. Tell the platform’s administrator: the single sign-on settings may be wrong.',
  'sso.busy':
    'Too many single sign-ons are under way on this server. Try again in {seconds} seconds, or sign in with your email and password.',
} as const;

export const ssoZh: Record<keyof typeof ssoEn, string> = {
  'sso.signIn': '使用单点登录',
  'sso.title': '单点登录',
  'sso.signedIn': '已以 {name} 登录，正在打开控制台…',
  'sso.continue': '进入控制台',
  'sso.tryAgain': '重新开始单点登录',
  'sso.back': '返回登录',
  'sso.notConfigured': '此服务器未配置单点登录。请使用邮箱和密码登录。',
  'sso.state': '此次登录与本浏览器发起的登录不符：它已完成、超过十分钟，或在别处发起。请重新开始。',
  'sso.noRole': '您在登录提供方的账号不属于任何对应 Keyward 角色的组。请联系所有者将您加入其中一个组。',
  'sso.noEmail': '登录提供方没有提供您的邮箱地址，Keyward 需要它来标识您。',
  'sso.emailUnverified':
    '已有使用您邮箱的操作员，但登录提供方尚未验证该地址属于您。请在提供方完成验证，或联系所有者。',
  'sso.subjectConflict': '使用您邮箱的操作员已关联登录提供方的另一个账号。请联系所有者。',
  'sso.disabled': '您的操作员账号已停用。请联系所有者。',
  'sso.lastOwner':
    '按您在登录提供方的组，最后一位在用的所有者将失去所有者角色。Keyward 必须保留一位所有者：请恢复所有者组，或先指定另一位所有者。',
  'sso.taken': '同一账号的另一次登录恰好同时完成。请重新开始。',
  'sso.unavailable': '暂时无法连接登录提供方。请几分钟后再试；若持续出现，请告知平台管理员。',
  'sso.providerRefused': '登录提供方未允许您登录（{code}）。',
  'sso.mismatch': '登录提供方的应答不属于此次登录，未被接受。请重新开始。',
  'sso.badAnswer': '无法接受登录提供方的应答。请告知平台管理员：单点登录设置可能有误。',
  'sso.busy': '此服务器上进行中的单点登录过多。请在 {seconds} 秒后重试，或使用邮箱和密码登录。',
};
