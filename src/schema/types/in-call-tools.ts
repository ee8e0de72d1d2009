import { bookingCalendarInput, readBookingCalendar, type BookingCalendar } from '../../services/voice/booking/calendar.js';
import { setAgentBookingCalendar, setCampaignCallTools } from '../../services/voice/tools/settings.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';
import { Weekday } from './campaigns.js';

// What the in-call tools work with: the booking calendar (a campaign's own over its agent's) and a
// campaign's transfer number. GraphQL only: v1's shapes do not change.

const doc = (field: keyof typeof bookingCalendarInput.shape) => bookingCalendarInput.shape[field].description;

const BookingHoursType = builder.objectRef<BookingCalendar['weekly_hours'][number]>('BookingHours').implement({
  description: "Opening hours of one day, local to the calendar's zone.",
  fields: (t) => ({
    day: t.field({ type: Weekday, resolve: (h) => h.day }),
    start: t.exposeString('start'),
    end: t.exposeString('end'),
  }),
});

const BookingCalendarType = builder.objectRef<BookingCalendar>('BookingCalendar').implement({
  description: 'When appointments can be booked during calls: slots laid out in the opening hours, each with its places.',
  fields: (t) => ({
    timeZone: t.exposeString('time_zone', { description: doc('time_zone') }),
    weeklyHours: t.field({ type: [BookingHoursType], description: doc('weekly_hours'), resolve: (c) => c.weekly_hours }),
    slotMinutes: t.exposeInt('slot_minutes', { description: doc('slot_minutes') }),
    bufferMinutes: t.exposeInt('buffer_minutes', { description: doc('buffer_minutes') }),
    capacityPerSlot: t.exposeInt('capacity_per_slot', { description: doc('capacity_per_slot') }),
    blackoutDates: t.exposeStringList('blackout_dates', { description: doc('blackout_dates') }),
    horizonDays: t.exposeInt('horizon_days', { description: doc('horizon_days') }),
  }),
});

builder.prismaObjectFields('Campaign', (t) => ({
  bookingCalendar: t.field({
    type: BookingCalendarType,
    nullable: true,
    description: "Its own booking calendar; null: its calls book on their agent's.",
    select: { bookingCalendar: true },
    resolve: (c) => readBookingCalendar(c.bookingCalendar),
  }),
  transferNumber: t.exposeString('transferNumber', {
    nullable: true,
    description: 'E.164: where the agent may transfer its calls (transfer_call); null: no transfers.',
  }),
}));

builder.prismaObjectFields('Agent', (t) => ({
  bookingCalendar: t.field({
    type: BookingCalendarType,
    nullable: true,
    description: 'The booking calendar of its campaigns that have none of their own.',
    select: { bookingCalendar: true },
    resolve: (a) => readBookingCalendar(a.bookingCalendar),
  }),
}));

const BookingHoursInput = builder.inputType('BookingHoursInput', {
  fields: (t) => ({
    day: t.field({ type: Weekday, required: true }),
    start: t.string({ required: true, description: 'HH:MM, 00:00 to 23:59.' }),
    end: t.string({ required: true, description: 'HH:MM, later than start; 24:00 allowed.' }),
  }),
});

const BookingCalendarInput = builder.inputType('BookingCalendarInput', {
  fields: (t) => ({
    timeZone: t.string({ required: true, description: doc('time_zone') }),
    weeklyHours: t.field({ type: [BookingHoursInput], required: true, description: doc('weekly_hours') }),
    slotMinutes: t.int({ required: true, description: doc('slot_minutes') }),
    bufferMinutes: t.int({ description: doc('buffer_minutes') }),
    capacityPerSlot: t.int({ description: doc('capacity_per_slot') }),
    blackoutDates: t.stringList({ description: doc('blackout_dates') }),
    horizonDays: t.int({ description: doc('horizon_days') }),
  }),
});

const CampaignCallToolsInput = builder.inputType('CampaignCallToolsInput', {
  description: 'A field left out stays as it is; null clears it.',
  fields: (t) => ({
    bookingCalendar: t.field({ type: BookingCalendarInput, description: "null: book on the agent's calendar." }),
    transferNumber: t.string({ description: "A phone number (the account's default country when it has no +); null: no transfers." }),
  }),
});

builder.mutationFields((t) => ({
  setCampaignCallTools: t.prismaField({
    type: 'Campaign',
    description: "Sets a draft, paused or running campaign's booking calendar and transfer number, used by its calls' in-call tools.",
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: CampaignCallToolsInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => setCampaignCallTools(ctx.service, args.id, input, query), [
        'bookingCalendar',
        'transferNumber',
      ]),
  }),
  setAgentBookingCalendar: t.prismaField({
    type: 'Agent',
    description: "Sets (null: clears) an agent's booking calendar, which its campaigns without their own book appointments on.",
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), calendar: t.arg({ type: BookingCalendarInput }) },
    resolve: (query, _root, args, ctx, info) =>
      args.calendar === null || args.calendar === undefined
        ? setAgentBookingCalendar(ctx.service, args.id, null, query)
        : withServiceInput(info, 'calendar', args.calendar, (calendar) => setAgentBookingCalendar(ctx.service, args.id, calendar, query)),
  }),
}));
